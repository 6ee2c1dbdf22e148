// RFC 9700 §4.12.2 (303 after a form POST) and RFC 9110 §15.5.2 (no 401 without WWW-Authenticate) on the router's pages.
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, USER, type TestApp } from '../helpers/app.js';
import { authorizeQuery, hiddenField, signInAndGetConsent } from '../helpers/browser-flow.js';

let t: TestApp;
beforeEach(async () => { t = await createTestApp(); });

/** The sign-in page of a fresh authorization request, with its agent. */
async function loginPage(): Promise<{ agent: request.Agent; form: { csrf_token: string; request_id: string } }> {
  const agent = request.agent(t.app);
  const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
  expect(page.status).toBe(200);
  return { agent, form: { csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id') } };
}

describe('RFC 9700 §4.12.2: a redirect answering a form POST is 303 See Other, never 302 or 307', () => {
  it('Cancel on the sign-in form, sent with the password fields filled as a browser sends them', async () => {
    const { agent, form } = await loginPage();
    const res = await agent.post('/oauth2/login').type('form').send({ ...form, username: USER.username, password: USER.password, cancel: '1' });
    expect(res.status).toBe(303);
    expect(new URL(res.headers.location!).searchParams.get('error')).toBe('access_denied');
  });

  it('a successful sign-in', async () => {
    const { agent, form } = await loginPage();
    const res = await agent.post('/oauth2/login').type('form').send({ ...form, username: USER.username, password: USER.password });
    expect(res.status).toBe(303);
  });

  it.each(['allow', 'deny'] as const)('the consent form: %s', async (decision) => {
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient));
    const res = await agent.post('/oauth2/consent').type('form')
      .send({ csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision });
    expect(res.status).toBe(303);
    const callback = new URL(res.headers.location!);
    expect(callback.searchParams.has(decision === 'allow' ? 'code' : 'error')).toBe(true);
  });
});

describe('RFC 9110 §15.5.2: a page never answers 401, which must carry a WWW-Authenticate challenge', () => {
  it('a wrong password shows the sign-in form again with 400 and no challenge', async () => {
    const { agent, form } = await loginPage();
    const res = await agent.post('/oauth2/login').type('form').send({ ...form, username: USER.username, password: 'not the password' });
    expect(res.status).toBe(400);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.text).toContain('name="password"');
  });

  it('a consent form posted after the sign-in ended is 403, not 401', async () => {
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient));
    // Another browser's copy of the form: same page, no session cookie.
    const res = await request(t.app).post('/oauth2/consent').type('form')
      .send({ csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision: 'allow' });
    expect(res.status).not.toBe(401);
    expect(res.headers['www-authenticate']).toBeUndefined();
  });
});
