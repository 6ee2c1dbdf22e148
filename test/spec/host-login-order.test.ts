// The host's own login (currentUser + loginUrl) behind express-session and passport, with the router mounted
// after them (it works) and before them (a clear error page and one log line naming the fix, never a loop).
import { createHmac } from 'node:crypto';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import type { UserAuth } from '../../src/user-auth.js';
import { ISSUER, REDIRECT_URI, basic, type TestClient } from '../helpers/app.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';

const HOST_USER = { id: 'host-bob', username: 'bob', password: 'host-password-1', name: 'Bob Host' };
type Order = 'session, passport, router' | 'router, session, passport' | 'session, router, passport';

/** Every line the router logged, by level. */
function captureLogger() {
  const lines = { warn: [] as string[], error: [] as string[] };
  return { lines, logger: { warn: (m: string) => { lines.warn.push(m); }, error: (m: string) => { lines.error.push(m); } } };
}

/** Only same-site paths may be a return target (an open redirect otherwise). */
function returnTarget(value: unknown): string {
  const target = typeof value === 'string' ? value : '/';
  return target.startsWith('/') && !target.startsWith('//') ? target : '/';
}

/** A host app as hosts write it: express-session, passport-local with a passport session, its own /login. */
async function createPassportHost(order: Order, logoutUrl?: UserAuth['logoutUrl']) {
  const store = createMemoryStore();
  const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  const authenticator = new passport.Passport();
  authenticator.use(new LocalStrategy((username, password, done) => {
    done(null, username === HOST_USER.username && password === HOST_USER.password ? { id: HOST_USER.id } : false);
  }));
  authenticator.serializeUser((user, done) => done(null, (user as { id: string }).id));
  authenticator.deserializeUser((id: string, done) => done(null, { id }));
  const userAuth: UserAuth = {
    async currentUser(req) {
      const user = req.user as { id?: string } | undefined;
      return user?.id === HOST_USER.id ? { id: HOST_USER.id, displayName: HOST_USER.name } : null;
    },
    loginUrl: (_req, returnTo) => `/login?return_to=${encodeURIComponent(returnTo)}`,
    ...(logoutUrl ? { logoutUrl } : {}),
  };
  const { lines, logger } = captureLogger();
  const oauth = createOAuthRouter(store, userAuth, { issuer: ISSUER, logger });
  const app = express();
  const mounts = {
    session: session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }),
    passport: [authenticator.initialize(), authenticator.session()],
    router: oauth.router,
  };
  for (const part of order.split(', ') as Array<keyof typeof mounts>) app.use(mounts[part]);
  // The host's login page: a signed-in user goes straight back, as most host logins do.
  app.get('/login', (req, res) => {
    if (req.user) res.redirect(303, returnTarget(req.query.return_to));
    else res.type('html').send('<form method="post"><input name="username"><input name="password" type="password"></form>');
  });
  app.post('/login', express.urlencoded({ extended: false }), authenticator.authenticate('local', { failureRedirect: '/login' }),
    (req, res) => { res.redirect(303, returnTarget(req.query.return_to)); });
  app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  return { app, lines, client: { clientId: client.clientId, clientSecret } satisfies TestClient };
}

/** Opens the authorization request signed out, signs in at the host's login, and returns where that led. */
async function signInThroughHostLogin(agent: request.Agent, client: TestClient): Promise<request.Response> {
  const start = await agent.get(`/oauth2/authorize?${authorizeQuery(client)}`);
  expect(start.status).toBe(303);
  const login = new URL(start.headers.location!, ISSUER);
  expect(login.pathname).toBe('/login');
  expect((await agent.get(`${login.pathname}${login.search}`)).status).toBe(200);
  const posted = await agent.post(`${login.pathname}${login.search}`).type('form')
    .send({ username: HOST_USER.username, password: HOST_USER.password });
  expect(posted.status).toBe(303);
  expect(posted.headers.location).toMatch(/^\/oauth2\/authorize\?/);
  return agent.get(posted.headers.location!);
}

/** Follows redirects the way a browser would, up to `limit` hops, and returns the last answer. */
async function follow(agent: request.Agent, first: request.Response, limit: number): Promise<{ res: request.Response; hops: number }> {
  let res = first;
  let hops = 0;
  while (res.status >= 300 && res.status < 400 && hops < limit) {
    const next = new URL(res.headers.location!, ISSUER);
    res = await agent.get(`${next.pathname}${next.search}`);
    hops += 1;
  }
  return { res, hops };
}

describe('the router mounted after the host\'s session and passport middleware (README "Embedding in your app")', () => {
  it('resumes the authorization request after the host login, and the code yields the host user\'s token', async () => {
    const { app, client, lines } = await createPassportHost('session, passport, router');
    const agent = request.agent(app);
    const consent = await signInThroughHostLogin(agent, client);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain(HOST_USER.name);
    const decided = await agent.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'), decision: 'allow',
    });
    expect(decided.status).toBe(303);
    const code = new URL(decided.headers.location!).searchParams.get('code')!;
    const token = await request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    expect(token.status).toBe(200);
    const me = await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token.body.access_token}`);
    expect(me.body.userId).toBe(HOST_USER.id);
    // The host's session is used: no warning about the router's own session secret, no error.
    expect(lines).toEqual({ warn: [], error: [] });
  });
});

describe('signing out a user the host signed in (UserAuth.logoutUrl): only the host can end its sign-in', () => {
  /** Signs in through the host login and approves, so the connected-applications page has a row. */
  async function signedInAtHost(logoutUrl?: UserAuth['logoutUrl']) {
    const host = await createPassportHost('session, passport, router', logoutUrl);
    const agent = request.agent(host.app);
    const consent = await signInThroughHostLogin(agent, host.client);
    await agent.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'), decision: 'allow',
    });
    return { ...host, agent };
  }

  it("the connected-applications page links to the host's sign-out, not to the router's form that could not end it", async () => {
    const { agent } = await signedInAtHost(() => '/logout?from=oauth');
    const page = await agent.get('/oauth2/consents');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/logout?from=oauth">Sign out</a>');
    expect(page.text).not.toContain('action="/oauth2/logout"');
  });

  it('without logoutUrl the page offers no sign-out to such a user', async () => {
    const { agent } = await signedInAtHost();
    const page = await agent.get('/oauth2/consents');
    expect(page.text).toContain('Signed in as');
    expect(page.text).not.toContain('Sign out');
  });

  it('a logoutUrl that is not a path of the site or an http(s) URL is not linked, and logged once per page', async () => {
    const { agent, lines } = await signedInAtHost(() => 'javascript:alert(1)');
    const page = await agent.get('/oauth2/consents');
    expect(page.text).not.toContain('javascript:');
    expect(page.text).not.toContain('Sign out');
    expect(lines.error).toEqual([expect.stringContaining('userAuth.logoutUrl must return a path of this site')]);
  });

  it('a POST to /oauth2/logout says the user is still signed in, which is true: the next request gets the consent page', async () => {
    const { agent, client } = await signedInAtHost(() => '/logout');
    const page = await agent.get('/oauth2/consents');
    const out = await agent.post('/oauth2/logout').type('form').send({ csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(out.status).toBe(200);
    expect(out.text).toContain('You are still signed in');
    expect(out.text).toContain('<a href="/logout">its own sign-out</a>');
    expect(out.text).not.toContain('You are signed out');
    const again = await agent.get(`/oauth2/authorize?${authorizeQuery(client, { state: 'after-sign-out' })}`);
    expect(again.status, 'remembered consent answers at once').toBe(302);
  });
});

describe('the router mounted before the host\'s session and passport middleware', () => {
  it('answers the browser back from the host login with an error page instead of sending it to the login again', async () => {
    const { app, client } = await createPassportHost('router, session, passport');
    const agent = request.agent(app);
    const back = await signInThroughHostLogin(agent, client);
    expect(back.status).toBe(403);
    expect(back.headers.location).toBeUndefined();
    expect(back.text).toContain('still sees you as signed out');
    expect(back.text).toContain('<code>access_denied</code>');
  });

  it('logs once what is wrong and the middleware order that fixes it', async () => {
    const { app, client, lines } = await createPassportHost('router, session, passport');
    const agent = request.agent(app);
    await signInThroughHostLogin(agent, client);
    expect(lines.error).toHaveLength(1);
    expect(lines.error[0]).toContain('mount oauth.router after them');
    expect(lines.error[0]).toContain('app.use(session(…)); app.use(passport.initialize()); app.use(passport.session()); app.use(oauth.router)');
    // Trying again: the host login sends the signed-in browser straight back, and the round trip stops at
    // the error page after one pass, with no second log line.
    const again = await follow(agent, await agent.get(`/oauth2/authorize?${authorizeQuery(client)}`), 10);
    expect(again.res.status).toBe(403);
    expect(again.hops).toBe(2); // authorize → host login → authorize
    expect(lines.error).toHaveLength(1);
  });

  it('names passport.session() when only passport runs after the router', async () => {
    const { app, client, lines } = await createPassportHost('session, router, passport');
    const agent = request.agent(app);
    // The router's note of the trip is a cookie of its own, so passport's regenerating the host session at
    // login does not lose it: the browser back from the login gets the error page at once.
    const { res, hops } = await follow(agent, await signInThroughHostLogin(agent, client), 10);
    expect(res.status).toBe(403);
    expect(hops).toBe(0);
    expect(lines.error).toHaveLength(1);
    expect(lines.error[0]).toContain('passport.session() runs after oauth.router');
  });
});

describe('a host login that keeps no express-session (not accused of a wrong order)', () => {
  const SECRET = 'host-cookie-secret';
  const sign = (id: string) => `${id}.${createHmac('sha256', SECRET).update(id).digest('base64url')}`;

  async function createCookieHost() {
    const store = createMemoryStore();
    const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const userAuth: UserAuth = {
      // A signed cookie of its own, read on every request: no session middleware anywhere.
      async currentUser(req) {
        const cookie = /(?:^|;\s*)host_user=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
        return cookie && cookie === sign(HOST_USER.id) ? { id: HOST_USER.id, displayName: HOST_USER.name } : null;
      },
      loginUrl: (_req, returnTo) => `/login?return_to=${encodeURIComponent(returnTo)}`,
    };
    const { lines, logger } = captureLogger();
    const app = express();
    app.use(createOAuthRouter(store, userAuth, { issuer: ISSUER, session: { secret: 'router-session-secret-0123456789' }, logger }).router);
    app.get('/login', (_req, res) => { res.type('html').send('<form method="post"></form>'); });
    app.post('/login', (req, res) => {
      res.cookie('host_user', sign(HOST_USER.id), { httpOnly: true, sameSite: 'lax' });
      res.redirect(303, returnTarget(req.query.return_to));
    });
    return { app, lines, client: { clientId: client.clientId, clientSecret } satisfies TestClient };
  }

  it('signs in through the host login and reaches the consent page with nothing logged', async () => {
    const { app, client, lines } = await createCookieHost();
    const agent = request.agent(app);
    const start = await agent.get(`/oauth2/authorize?${authorizeQuery(client)}`);
    expect(start.status).toBe(303);
    const login = new URL(start.headers.location!, ISSUER);
    const posted = await agent.post(`${login.pathname}${login.search}`);
    const consent = await agent.get(posted.headers.location!);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain(HOST_USER.name);
    // The next request of a signed-in user starts afresh too.
    expect((await agent.get(`/oauth2/authorize?${authorizeQuery(client, { state: 'second' })}`)).status).toBe(200);
    expect(lines).toEqual({ warn: [], error: [] });
  });

  it('sends a browser that has not signed in yet to the host login, each new request once', async () => {
    const { app, client, lines } = await createCookieHost();
    const agent = request.agent(app);
    for (const state of ['one', 'two', 'three']) {
      const start = await agent.get(`/oauth2/authorize?${authorizeQuery(client, { state })}`);
      expect(start.status).toBe(303);
      expect(start.headers.location).toMatch(/^\/login\?return_to=/);
    }
    expect(lines).toEqual({ warn: [], error: [] });
  });
});
