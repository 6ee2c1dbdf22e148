// The login page's Content-Security-Policy must let its form's redirect chain reach the client: with a
// remembered consent, POST /oauth2/login → 303 /oauth2/authorize → 302 redirect_uri, and browsers apply
// form-action to every redirect after a form submission (CSP3 §6.3.1.2; Chromium blocks it).
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { REDIRECT_URI, createTestApp, type TestApp } from '../helpers/app.js';
import { authorize, authorizeQuery } from '../helpers/browser-flow.js';
import { openLoginForm, postLogin } from '../helpers/spec-requests.js';

function formAction(csp: string | undefined): string[] {
  const directive = (csp ?? '').split(';').map((d) => d.trim()).find((d) => d.startsWith('form-action '));
  expect(directive, csp).toBeDefined();
  return directive!.split(/\s+/).slice(1);
}

describe('login page CSP form-action and the redirect to the client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });

  it('allows the redirect_uri origin on the login page of an authorization request', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    expect(formAction(login.res.headers['content-security-policy'])).toEqual(["'self'", new URL(REDIRECT_URI).origin]);
  });

  it('allows the redirect_uri origin on the login page shown again after a wrong password', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const failed = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId, password: 'wrong' });
    expect(failed.status).toBe(400);
    expect(formAction(failed.headers['content-security-policy'])).toEqual(["'self'", new URL(REDIRECT_URI).origin]);
  });

  it('allows the origin of the redirect_uri that was asked for, among several registered', async () => {
    const other = 'http://localhost:8080/cb?tenant=a%20b';
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient, { redirect_uri: other }));
    expect(formAction(login.res.headers['content-security-policy'])).toEqual(["'self'", 'http://localhost:8080']);
  });

  /** The login page's form-action for an authorization request to `redirectUri`, registered for the test's duration. */
  async function formActionFor(redirectUri: string): Promise<string[]> {
    const registered = (await t.store.clients.findClient(t.codeClient.clientId))!.redirectUris;
    await t.store.clients.updateClient!(t.codeClient.clientId, { redirectUris: [...registered, redirectUri] });
    try {
      const login = await openLoginForm(request.agent(t.app), '', authorizeQuery(t.codeClient, { redirect_uri: redirectUri }));
      return formAction(login.res.headers['content-security-policy']);
    } finally {
      await t.store.clients.updateClient!(t.codeClient.clientId, { redirectUris: registered });
    }
  }

  it('allows an IPv6 loopback redirect_uri by its scheme, which a CSP host-source cannot name (RFC 8252 §7.3)', async () => {
    expect(await formActionFor('http://[::1]:8123/cb')).toEqual(["'self'", 'http:']);
  });

  it('keeps the origin of any other IPv6 literal: the scheme fallback is for this machine\'s loopback only', async () => {
    expect(await formActionFor('https://[2001:db8::1]/cb')).toEqual(["'self'", 'https://[2001:db8::1]']);
  });

  it('with a remembered consent, the login form POST ends at redirect_uri, an origin its page allowed', async () => {
    await authorize(t.app, t.codeClient); // first time: consent given and remembered
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const posted = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId });
    expect(posted.status).toBe(303);
    const resumed = await agent.get(posted.headers.location!);
    expect(resumed.status).toBe(302);
    const target = new URL(resumed.headers.location!);
    expect(target.searchParams.get('code')).toBeTruthy();
    expect(formAction(login.res.headers['content-security-policy'])).toContain(target.origin);
  });
});
