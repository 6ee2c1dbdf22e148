// prompt=none (OpenID Connect Core §3.1.2.1, §3.1.2.6): an authorization request answered without any page, or told which page it needs.
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { ISSUER, REDIRECT_URI, createTestApp, type TestApp } from '../helpers/app.js';
import { authorize, authorizeQuery, signIn } from '../helpers/browser-flow.js';

let t: TestApp;
beforeEach(async () => { t = await createTestApp(); });

/** Asserts a 302 to the registered redirect_uri carrying `error`, the request's state and the issuer (RFC 9207). */
function expectErrorRedirect(res: request.Response, error: string): void {
  expect(res.status, res.text).toBe(302);
  const location = new URL(res.headers.location!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  expect(location.searchParams.get('error')).toBe(error);
  expect(location.searchParams.get('state')).toBe('xyz-123');
  expect(location.searchParams.get('iss')).toBe(ISSUER);
  expect(location.searchParams.has('code')).toBe(false);
}

describe('prompt=none: no login or consent page is ever shown', () => {
  it('nobody signed in: login_required, redirected to the integration instead of the login page', async () => {
    expectErrorRedirect(await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'none' })}`), 'login_required');
  });

  it('signed in, no consent remembered for the request: consent_required instead of the consent page', async () => {
    const agent = request.agent(t.app);
    const consent = await signIn(agent, '', authorizeQuery(t.codeClient));
    expect(consent.status).toBe(200);
    expectErrorRedirect(await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'none' })}`), 'consent_required');
  });

  it('signed in, with a remembered consent covering the request: a code at once, as without prompt', async () => {
    await authorize(t.app, t.codeClient);
    const agent = request.agent(t.app);
    expect((await signIn(agent, '', authorizeQuery(t.codeClient))).status).toBe(302);
    const res = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'none' })}`);
    expect(res.status).toBe(302);
    const callback = new URL(res.headers.location!);
    expect(callback.searchParams.get('code')).toBeTruthy();
    expect(callback.searchParams.get('state')).toBe('xyz-123');
  });

  it.each(['none consent', 'login none'])('prompt=%s, none with another value, is invalid_request', async (prompt) => {
    expectErrorRedirect(await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt })}`), 'invalid_request');
  });

  it('an unknown client or redirect_uri still gets the error page, never a redirect (RFC 6749 §4.1.2.1)', async () => {
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'none', redirect_uri: 'https://evil.example/cb' })}`);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });
});
