// prompt=login and max_age (OpenID Connect Core §3.1.2.1): a request that asks for a fresh sign-in gets one, or login_required.
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { ISSUER, REDIRECT_URI, USER, createTestApp, type TestApp } from '../helpers/app.js';
import { authorize, authorizeQuery, hiddenField, signIn } from '../helpers/browser-flow.js';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { hostSessionUserAuth } from '../helpers/host-login.js';

let t: TestApp;
beforeEach(async () => { t = await createTestApp(); });

/** A browser signed in through the router's login form, with the integration's consent remembered. */
async function signedInWithConsent(): Promise<request.Agent> {
  await authorize(t.app, t.codeClient);
  const agent = request.agent(t.app);
  expect((await signIn(agent, '', authorizeQuery(t.codeClient))).status).toBe(302);
  return agent;
}

function isLoginPage(res: request.Response): boolean {
  return res.status === 200 && res.text.includes('name="password"');
}

/** Signs in on the login page `page` and returns where the 303 sends the browser. */
async function signInOn(agent: request.Agent, page: request.Response): Promise<string> {
  const posted = await agent.post('/oauth2/login').type('form').send({
    csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'),
    username: USER.username, password: USER.password,
  });
  expect(posted.status).toBe(303);
  return posted.headers.location!;
}

function codeOf(res: request.Response): string | null {
  expect(res.status, res.text).toBe(302);
  return new URL(res.headers.location!).searchParams.get('code');
}

function errorOf(res: request.Response): string | null {
  expect(res.status, res.text).toBe(302);
  const location = new URL(res.headers.location!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  expect(location.searchParams.get('iss')).toBe(ISSUER);
  expect(location.searchParams.has('code')).toBe(false);
  return location.searchParams.get('error');
}

describe('prompt=login: the user signs in again, even when signed in with a consent remembered', () => {
  it('shows the login page instead of a code; the sign-in made there answers the request with a code, once', async () => {
    const agent = await signedInWithConsent();
    const url = `/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'login', state: 'fresh' })}`;
    const page = await agent.get(url);
    expect(isLoginPage(page), 'the login page, not a code').toBe(true);
    const back = await signInOn(agent, page);
    const answered = await agent.get(back);
    expect(codeOf(answered)).toBeTruthy();
    expect(new URL(answered.headers.location!).searchParams.get('state')).toBe('fresh');
    // The same request again (a reload, a replayed link): that sign-in has answered it; another one is asked for.
    expect(isLoginPage(await agent.get(url))).toBe(true);
  });

  it('signed out: one login page, then the request goes on (no second login page)', async () => {
    const agent = request.agent(t.app);
    const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'login' })}`);
    expect(isLoginPage(page)).toBe(true);
    const next = await agent.get(await signInOn(agent, page));
    expect(next.status).toBe(200);
    expect(next.text).toContain('name="decision"');
  });

  it('a sign-in made for another request does not count: prompt=login of a request with another state asks again', async () => {
    const agent = request.agent(t.app);
    const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state: 'first' })}`);
    await signInOn(agent, page);
    expect(isLoginPage(await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'login', state: 'second' })}`))).toBe(true);
  });

  it('prompt=login consent: the login page, then the consent page though a consent is remembered', async () => {
    const agent = await signedInWithConsent();
    const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'login consent' })}`);
    expect(isLoginPage(page)).toBe(true);
    const next = await agent.get(await signInOn(agent, page));
    expect(next.status).toBe(200);
    expect(next.text).toContain('name="decision"');
  });
});

describe('max_age: a sign-in older than max_age seconds is asked for again', () => {
  it('a sign-in within max_age stands: a code at once', async () => {
    const agent = await signedInWithConsent();
    expect(codeOf(await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { max_age: '3600' })}`))).toBeTruthy();
  });

  it('max_age=0 after the sign-in: the login page, and the sign-in made there answers it', async () => {
    const agent = await signedInWithConsent();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { max_age: '0' })}`);
    expect(isLoginPage(page)).toBe(true);
    expect(codeOf(await agent.get(await signInOn(agent, page)))).toBeTruthy();
  });

  it('with prompt=none, a sign-in older than max_age is login_required, never a page', async () => {
    const agent = await signedInWithConsent();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(errorOf(await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'none', max_age: '0' })}`))).toBe('login_required');
  });

  it.each(['-1', 'abc', '1.5', '1e3', '99999999999'])('max_age=%s is invalid_request', async (maxAge) => {
    const agent = await signedInWithConsent();
    expect(errorOf(await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { max_age: maxAge })}`))).toBe('invalid_request');
  });

  it('max_age sent twice is invalid_request (RFC 6749 §3.1: parameters MUST NOT be included more than once)', async () => {
    const agent = await signedInWithConsent();
    expect(errorOf(await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}&max_age=60&max_age=0`))).toBe('invalid_request');
  });
});

describe('the host app\'s own sign-in, whose time the router cannot tell (OpenID Connect Core §3.1.2.1: login_required when it cannot re-authenticate)', () => {
  /** A host whose login (`/account/login`) signs in `host-42` and goes back to `return_to`; signed in already unless `signedOut`. */
  async function hostApp(options: { signedOut?: boolean; routerLogin?: boolean } = {}) {
    const store = createMemoryStore();
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const { currentUser, loginUrl } = hostSessionUserAuth();
    const returns: string[] = [];
    const app = express();
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
    app.post('/account/login', (req, res) => {
      (req.session as unknown as { hostUser?: string }).hostUser = 'host-42';
      const returnTo = typeof req.query['return_to'] === 'string' ? req.query['return_to'] : '';
      returns.push(returnTo);
      if (returnTo.startsWith('/oauth2/')) res.redirect(303, returnTo);
      else res.status(204).end();
    });
    // With the router's own login beside the host's (verifyCredentials), the host's sign-in has no page of its own here.
    const userAuth = options.routerLogin ? { currentUser: currentUser!, verifyCredentials: async () => null } : { currentUser: currentUser!, loginUrl: loginUrl! };
    const oauth = createOAuthRouter(store, userAuth, {
      issuer: ISSUER, logger: { warn() {}, error() {} },
    });
    app.use(oauth.router);
    const agent = request.agent(app);
    if (!options.signedOut) expect((await agent.post('/account/login')).status).toBe(204);
    return { agent, returns, client: { clientId: client.clientId, clientSecret: '' } };
  }

  it.each([['prompt=login', { prompt: 'login' }], ['max_age=0', { max_age: '0' }], ['max_age=86400', { max_age: '86400' }]])(
    '%s, signed in by the host: login_required, since nothing tells the router when the host signed the user in', async (_name, extra) => {
      const { agent, returns, client } = await hostApp();
      expect(errorOf(await agent.get(`/oauth2/authorize?${authorizeQuery(client, extra)}`))).toBe('login_required');
      // Not sent to the host's login (only the set-up's own sign-in went there): a page there that bounces a signed-in
      // browser back would have proven nothing.
      expect(returns).toEqual(['']);
    });

  it('prompt=login, signed out: login_required at once, not after a sign-in at the host that could not count', async () => {
    const { agent, returns, client } = await hostApp({ signedOut: true });
    expect(errorOf(await agent.get(`/oauth2/authorize?${authorizeQuery(client, { prompt: 'login' })}`))).toBe('login_required');
    expect(returns).toHaveLength(0);
  });

  it('a host-login mark the browser brings back (set by the router, or planted) does not stand for a fresh sign-in', async () => {
    const { agent, client } = await hostApp();
    const query = authorizeQuery(client, { prompt: 'login' });
    for (let i = 0; i < 2; i += 1) expect(errorOf(await agent.get(`/oauth2/authorize?${query}`))).toBe('login_required');
  });

  it('with the router\'s login beside the host\'s, a host sign-in asked to be fresh is login_required too; without either, the request goes on', async () => {
    const { agent, client } = await hostApp({ routerLogin: true });
    expect(errorOf(await agent.get(`/oauth2/authorize?${authorizeQuery(client, { prompt: 'login' })}`))).toBe('login_required');
    expect(errorOf(await agent.get(`/oauth2/authorize?${authorizeQuery(client, { max_age: '60' })}`))).toBe('login_required');
    const page = await agent.get(`/oauth2/authorize?${authorizeQuery(client)}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');
  });
});

describe('a click on an expired consent page whose request asks for a fresh sign-in: the user is there, so a page, never a login_required redirect (RFC 6749 §4.1.2.1)', () => {
  const FRESH_NOTICE = 'This page had expired, so nothing was sent to <bdi>Acme CRM</bdi>. It asked for a new sign-in, which cannot be made here';

  /**
   * A host whose login (`/account/login`, a new session as OWASP asks) signs in `host-42`, beside the router's own login
   * page (`routerLogin`, where alice signs in) or alone.
   */
  async function hostWithLogins(routerLogin: boolean) {
    const store = createMemoryStore();
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const { currentUser, loginUrl } = hostSessionUserAuth();
    const app = express();
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
    app.post('/account/login', (req, res, next) => {
      req.session.regenerate((err) => {
        if (err) return next(err);
        (req.session as unknown as { hostUser?: string }).hostUser = 'host-42';
        res.status(204).end();
      });
    });
    const verifyCredentials = async (username: string, password: string) =>
      (username === USER.username && password === USER.password ? { id: USER.id, displayName: USER.displayName } : null);
    const userAuth = routerLogin ? { currentUser: currentUser!, loginUrl: loginUrl!, verifyCredentials } : { currentUser: currentUser!, loginUrl: loginUrl! };
    app.use(createOAuthRouter(store, userAuth, { issuer: ISSUER, logger: { warn() {}, error() {} } }).router);
    return { app, client: { clientId: client.clientId, clientSecret: '' } };
  }

  /** The page a stale consent form's POST leads to, checked to be the notice with a Deny, whose Deny is the access_denied. */
  async function expectNoticePage(browser: request.Agent, posted: request.Response, state: string): Promise<void> {
    expect(posted.status).toBe(303);
    expect(posted.headers.location!.startsWith(REDIRECT_URI)).toBe(false);
    const page = await browser.get(posted.headers.location!);
    expect(page.status, page.headers.location).toBe(403);
    expect(page.headers.location).toBeUndefined();
    expect(page.text).toContain(FRESH_NOTICE);
    const refused = await browser.post('/oauth2/login').type('form')
      .send({ csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), cancel: '1' });
    expect(refused.status).toBe(303);
    const location = new URL(refused.headers.location!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe(state);
  }

  it.each([
    ['prompt=login', 'allow', { prompt: 'login' }], ['prompt=login', 'deny', { prompt: 'login' }],
    ['max_age=0', 'allow', { max_age: '0' }], ['max_age=0', 'deny', { max_age: '0' }],
  ] as const)('%s, signed in afresh at the router\'s login, then the host\'s login replaced the session: the old page\'s %s gets the notice page', async (_name, decision, extra) => {
    const { app, client } = await hostWithLogins(true);
    const browser = request.agent(app);
    const page = await browser.get(`/oauth2/authorize?${authorizeQuery(client, { ...extra, state: 'fresh-tab' })}`);
    expect(isLoginPage(page)).toBe(true);
    const consent = await browser.get(await signInOn(browser, page));
    expect(consent.text).toContain('name="decision"');
    // The host's login signs somebody in in another tab: a new session, without the router's data.
    expect((await browser.post('/account/login')).status).toBe(204);
    const posted = await browser.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'),
      resume: hiddenField(consent.text, 'resume'), decision,
    });
    await expectNoticePage(browser, posted, 'fresh-tab');
  });

  it.each([['signed in at the host', true], ['signed out', false]])(
    'host login only, %s: a stale form carrying prompt=login gets the notice page, neither login_required nor the host\'s login (whose sign-in could not count)',
    async (_name, signedIn) => {
      const { app, client } = await hostWithLogins(false);
      const browser = request.agent(app);
      if (signedIn) expect((await browser.post('/account/login')).status).toBe(204);
      // A page shown before the set-up lost its own login page (none is shown for such a request now): its token is stale.
      const resume = Buffer.from(authorizeQuery(client, { prompt: 'login', state: 'host-tab' })).toString('base64url');
      const posted = await browser.post('/oauth2/consent').type('form')
        .send({ csrf_token: 'A'.repeat(43), request_id: 'x', resume, decision: 'allow' });
      await expectNoticePage(browser, posted, 'host-tab');
    },
  );

  it('a link without the notice is still login_required: only a click on an expired page is shown a page', async () => {
    const { app, client } = await hostWithLogins(true);
    const browser = request.agent(app);
    expect((await browser.post('/account/login')).status).toBe(204);
    expect(errorOf(await browser.get(`/oauth2/authorize?${authorizeQuery(client, { prompt: 'login' })}`))).toBe('login_required');
  });
});
