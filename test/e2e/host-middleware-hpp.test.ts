// RFC 6749 §3.1, §3.2: a parameter sent twice is refused, also behind a host's hpp (HTTP parameter pollution), which
// keeps one value of a repeated body field in req.body and sets the whole array aside in req.bodyPolluted.
import express from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, USER, type TestApp } from '../helpers/app.js';
import { authorizeQuery } from '../helpers/browser-flow.js';
import { openLoginForm, setCookieLine } from '../helpers/spec-requests.js';

/**
 * What hpp 0.2 (`app.use(hpp())`, after a body parser) does to a form body, in its own few lines so the package is
 * not a dependency: every array in req.body goes to req.bodyPolluted, and req.body keeps its last item.
 */
const hppLike: express.RequestHandler = (req, _res, next) => {
  const body = req.body as Record<string, unknown> | undefined;
  const polluted: Record<string, unknown> = {};
  if (body && req.is('urlencoded')) {
    for (const [name, value] of Object.entries(body)) {
      if (!Array.isArray(value)) continue;
      polluted[name] = value;
      body[name] = value[value.length - 1];
    }
  }
  (req as { bodyPolluted?: unknown }).bodyPolluted = polluted;
  next();
};

describe.each([false, true])('a host with express.urlencoded({ extended: %s }) and hpp before the router', (extended) => {
  let t: TestApp;
  let app: express.Express;

  beforeAll(async () => {
    t = await createTestApp();
    app = express();
    app.use(express.urlencoded({ extended }), hppLike);
    app.use(t.app);
  });

  const token = (body: string) =>
    request(app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form').send(body);

  it('token endpoint: a repeated grant_type is still refused (400 invalid_request)', async () => {
    const res = await token('grant_type=client_credentials&grant_type=client_credentials');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'parameter grant_type is repeated' });
  });

  it('token endpoint: a repeated scope is still refused, not granted as its last value', async () => {
    const res = await token('grant_type=client_credentials&scope=envelopes:read&scope=envelopes:sign');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'parameter scope is repeated' });
  });

  it('token endpoint: a wrong and a right client_secret in one body are refused, not authenticated by the last', async () => {
    const { clientId, clientSecret } = t.credentialsClient;
    const res = await request(app).post('/oauth2/token').type('form')
      .send(`grant_type=client_credentials&client_id=${clientId}&client_secret=wrong&client_secret=${clientSecret}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'parameter client_secret is repeated' });
  });

  it('token endpoint: an empty repeat still counts as omitted, and unread parameters may repeat', async () => {
    const res = await token('grant_type=&grant_type=client_credentials&resource=https://a.example&resource=https://b.example');
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBeTruthy();
  });

  it('revocation endpoint: a repeated token is refused', async () => {
    const res = await request(app).post('/oauth2/revoke').set('Authorization', basic(t.credentialsClient)).type('form')
      .send('token=a&token=b');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'parameter token is repeated' });
  });

  it('login form: a repeated username is refused (400 page), not signed in as the last one', async () => {
    const agent = request.agent(app);
    const form = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const res = await agent.post('/oauth2/login').type('form').send(new URLSearchParams([
      ['csrf_token', form.csrfToken], ['request_id', form.requestId],
      ['username', 'mallory'], ['username', USER.username], ['password', USER.password],
    ]).toString());
    expect(res.status).toBe(400);
    expect(setCookieLine(res), 'no sign-in session').toBeUndefined();
  });
});
