// The router's JSON answers are its own bytes whatever Express settings the host app sets: `json spaces` and `json
// replacer` (which res.json applies), `etag`, `x-powered-by`, `query parser`, `strict routing`, `case sensitive routing`;
// and none of them says X-Powered-By under Express's default, while the host's own routes keep it.
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, createTestRouter, LEGACY_ISSUER, REDIRECT_URI, type TestApp } from '../helpers/app.js';
import { authorize } from '../helpers/browser-flow.js';
import { redeemCode } from '../helpers/spec-requests.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createOAuthMetrics } from '../../src/metrics/index.js';
import type { OAuthRouter } from '../../src/types.js';

/** Settings a host may give its app; the replacer drops `error` and `keys` and renames nothing else. */
const SETTINGS: ReadonlyArray<readonly [string, unknown]> = [
  ['json spaces', 2],
  ['json replacer', (key: string, value: unknown) => (key === 'error' || key === 'keys' ? undefined : value)],
  ['etag', 'strong'],
  ['x-powered-by', true],
  ['query parser', 'extended'],
  ['strict routing', true],
  ['case sensitive routing', true],
];

/** The test app, its router mounted in an outer app with `settings` (what the host's own `express()` carries). */
async function hostWith(settings: ReadonlyArray<readonly [string, unknown]>, jwt = false): Promise<{ t: TestApp; app: express.Express }> {
  const t = await createTestApp(jwt ? { accessTokenFormat: 'jwt' } : {}, createMemoryStore());
  const app = express();
  for (const [name, value] of settings) app.set(name, value);
  app.use(t.app);
  return { t, app };
}

describe.each(SETTINGS)('a host app with %s set', (name, value) => {
  let plain: { t: TestApp; app: express.Express };
  let host: { t: TestApp; app: express.Express };

  beforeAll(async () => {
    plain = await hostWith([], true);
    host = await hostWith([[name, value]], true);
  });

  it('token endpoint: an error answer has the same status, headers and bytes as in a plain app', async () => {
    const send = (app: express.Express) => request(app).post('/oauth2/token').type('form').send('grant_type=client_credentials');
    const [a, b] = [await send(plain.app), await send(host.app)];
    expect(b.status).toBe(a.status);
    expect(b.text).toBe(a.text);
    expect(b.headers['etag']).toBeUndefined();
    expect(b.headers['x-powered-by']).toBeUndefined();
    expect(b.headers['content-type']).toBe('application/json;charset=UTF-8');
  });

  it('the code flow gets a token whose JSON has every field, compact', async () => {
    const callback = await authorize(host.app, host.t.codeClient);
    const res = await redeemCode(host.app, '', host.t.codeClient, callback.searchParams.get('code')!);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['access_token', 'refresh_token', 'expires_in', 'token_type']));
    expect(res.text).not.toContain('\n');
  });

  it('introspection and the metadata are compact JSON with every field', async () => {
    const token = await request(host.app).post('/oauth2/token').set('Authorization', basic(host.t.credentialsClient)).type('form')
      .send('grant_type=client_credentials');
    const introspection = await request(host.app).post('/oauth2/introspect').set('Authorization', basic(host.t.credentialsClient))
      .type('form').send({ token: token.body.access_token });
    expect(introspection.body.active).toBe(true);
    expect(introspection.text).not.toContain('\n');
    const metadata = await request(host.app).get('/.well-known/oauth-authorization-server');
    expect(metadata.body.token_endpoint).toBe('http://auth.test/oauth2/token');
    expect(metadata.text).not.toContain('\n');
  });

  it('JWKS: the key set, and its 503 while the store is down, are the router\'s own JSON', async () => {
    const jwks = await request(host.app).get('/oauth2/jwks');
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.text).not.toContain('\n');
    const down = await hostWith([[name, value]], true);
    const keys = down.t.store.keys! as unknown as Record<string, unknown>;
    for (const method of Object.keys(keys)) {
      if (typeof keys[method] === 'function') keys[method] = async () => { throw new StoreUnavailableError('store down'); };
    }
    const refused = await request(down.app).get('/oauth2/jwks');
    expect(refused.status).toBe(503);
    expect(refused.text).toBe('{"error":"temporarily_unavailable","error_description":"the authorization server is temporarily unavailable"}');
    expect(refused.headers['content-type']).toBe('application/json;charset=UTF-8');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers['etag']).toBeUndefined();
  });
});

describe('an app on Express defaults (x-powered-by on): no answer the router writes says X-Powered-By, the host\'s own routes still do', () => {
  let t: TestApp;
  let app: express.Express;
  let oauth: OAuthRouter;
  let accessToken: string;
  beforeAll(async () => {
    const store = createMemoryStore();
    oauth = createTestRouter(store, { accessTokenFormat: 'jwt', consentsPage: true, legacy: { issuer: LEGACY_ISSUER } });
    // The host's app as `express()` makes it, with the router's handlers mounted as the README shows.
    app = express();
    app.use(oauth.router);
    app.get('/health/ready', oauth.health.readiness);
    app.get('/health/live', oauth.health.liveness);
    app.get('/metrics', metrics.handler);
    app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
    app.get('/api/v1/sign', oauth.requireBearer({ scope: 'envelopes:sign' }), (_req, res) => { res.json({ ok: true }); });
    app.use(oauth.errorHandler);
    metrics.observe(oauth);
    const { client, clientSecret } = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials', allowedScopes: ['envelopes:read'] });
    const token = await request(app).post('/oauth2/token').set('Authorization', basic({ clientId: client.clientId, clientSecret })).type('form')
      .send('grant_type=client_credentials&scope=envelopes:read');
    accessToken = token.body.access_token as string;
    t = await createTestApp();
  });
  const metrics = createOAuthMetrics();
  afterAll(() => metrics.close());

  const noPoweredBy = (res: request.Response, what: string) => expect(res.headers['x-powered-by'], what).toBeUndefined();

  it('the token, revocation and introspection endpoints\' JSON, and their 405s', async () => {
    for (const name of ['token', 'revoke', 'introspect']) {
      noPoweredBy(await request(app).post(`/oauth2/${name}`).type('form').send(''), `POST ${name}`);
      noPoweredBy(await request(app).put(`/oauth2/${name}`), `PUT ${name}`);
    }
  });

  it('the metadata (RFC 8414) at each of its addresses, to GET and HEAD, and its 405', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/legacy', '/legacy/.well-known/oauth-authorization-server']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(200);
      noPoweredBy(res, `GET ${path}`);
      noPoweredBy(await request(app).head(path), `HEAD ${path}`);
      noPoweredBy(await request(app).put(path), `PUT ${path}`);
    }
  });

  it('the JWKS (RFC 7517) at both issuers, to GET and HEAD, its 405, and its 503 while the store is down', async () => {
    for (const path of ['/oauth2/jwks', '/legacy/oauth2/jwks']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(200);
      noPoweredBy(res, `GET ${path}`);
      noPoweredBy(await request(app).head(path), `HEAD ${path}`);
      noPoweredBy(await request(app).put(path), `PUT ${path}`);
    }
    const down = await hostWith([], true);
    const keys = down.t.store.keys! as unknown as Record<string, unknown>;
    for (const method of Object.keys(keys)) {
      if (typeof keys[method] === 'function') keys[method] = async () => { throw new StoreUnavailableError('store down'); };
    }
    const refused = await request(down.app).get('/oauth2/jwks');
    expect(refused.status).toBe(503);
    noPoweredBy(refused, 'JWKS 503');
  });

  it('the pages: the login page, an error page, the connected applications page and a 405 page', async () => {
    const login = await request(t.app).get('/oauth2/authorize').query({
      response_type: 'code', client_id: t.codeClient.clientId, redirect_uri: REDIRECT_URI,
    });
    expect(login.status).toBe(200);
    noPoweredBy(login, 'login page');
    const error = await request(app).get('/oauth2/authorize');
    expect(error.status).toBe(400);
    noPoweredBy(error, 'error page');
    noPoweredBy(await request(app).get('/oauth2/consents'), 'connected applications');
    const wrongMethod = await request(app).get('/oauth2/login');
    expect(wrongMethod.status).toBe(405);
    noPoweredBy(wrongMethod, '405 page');
  });

  it('requireBearer\'s refusals: 401 without a token, 403 for a missing scope', async () => {
    noPoweredBy(await request(app).get('/api/v1/me'), '401');
    const refused = await request(app).get('/api/v1/sign').set('Authorization', `Bearer ${accessToken}`);
    expect(refused.status).toBe(403);
    noPoweredBy(refused, '403');
  });

  it('the health checks and the metrics handler, though mounted on the host\'s routes', async () => {
    noPoweredBy(await request(app).get('/health/ready'), 'readiness');
    noPoweredBy(await request(app).get('/health/live'), 'liveness');
    const scrape = await request(app).get('/metrics');
    expect(scrape.status).toBe(200);
    noPoweredBy(scrape, 'metrics');
  });

  it('the host\'s own answers keep the host\'s setting: an admitted API request and a path the router does not serve', async () => {
    const admitted = await request(app).get('/api/v1/me').set('Authorization', `Bearer ${accessToken}`);
    expect(admitted.status).toBe(200);
    expect(admitted.headers['x-powered-by']).toBe('Express');
    const notFound = await request(app).get('/elsewhere');
    expect(notFound.status).toBe(404);
    expect(notFound.headers['x-powered-by']).toBe('Express');
  });
});
