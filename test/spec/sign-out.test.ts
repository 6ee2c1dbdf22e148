// Sign-out (POST /oauth2/logout) and the idle and absolute lifetimes of a sign-in.
import request from 'supertest';
import session from 'express-session';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, USER, type TestApp } from '../helpers/app.js';
import { authorize, authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import { CookieBrowser, type PageResponse } from '../helpers/cookie-browser.js';
import { SESSION_COOKIE, setCookieLine } from '../helpers/spec-requests.js';
import { MemorySessionStore } from '../../src/http/memory-session-store.js';
import { resolveOptions, OptionsError } from '../../src/options.js';
import type { OAuthRouterOptions } from '../../src/options.js';

const isLoginPage = (res: PageResponse) => res.status === 200 && /name="password"/.test(res.text);
const isConsentPage = (res: PageResponse) => res.status === 200 && /name="decision"/.test(res.text);

/** A session store that keeps every session for ever, as some stores configured without a TTL do. */
class NeverExpiringStore extends session.Store {
  private readonly sessions = new Map<string, string>();
  override get(sid: string, callback: (err: unknown, s?: session.SessionData | null) => void): void {
    const json = this.sessions.get(sid);
    callback(null, json ? JSON.parse(json) as session.SessionData : null);
  }
  override set(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    this.sessions.set(sid, JSON.stringify(data));
    callback?.();
  }
  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    this.sessions.delete(sid);
    callback?.();
  }
}

let t: TestApp;
let sessions: MemorySessionStore;

async function createApp(options: Partial<OAuthRouterOptions> = {}): Promise<void> {
  sessions = new MemorySessionStore();
  t = await createTestApp({ ...options, session: { secret: 'test-session-secret-0123456789', store: sessions, ...options.session } });
}

/** A browser signed in through the login form of an authorization request (rememberConsent is off below). */
async function signedIn(prefix = ''): Promise<CookieBrowser> {
  const browser = new CookieBrowser(t.app);
  const client = prefix ? t.legacyCodeClient : t.codeClient;
  const login = await browser.get(`${prefix}/oauth2/authorize?${authorizeQuery(client)}`);
  expect(isLoginPage(login)).toBe(true);
  const posted = await browser.post(`${prefix}/oauth2/login`, {
    csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
    username: USER.username, password: USER.password,
  });
  expect(posted.status).toBe(303);
  return browser;
}

const authorizePage = (browser: CookieBrowser, prefix = '') =>
  browser.get(`${prefix}/oauth2/authorize?${authorizeQuery(prefix ? t.legacyCodeClient : t.codeClient)}`);

/**
 * A host app whose express-session (mounted before the router) holds the sign-ins, `extend` adding its own routes
 * first, and a browser signed in there through the router's login page.
 */
async function signedInBehindHostSession(extend: (app: import('express').Express) => void = () => {}) {
  const { default: express } = await import('express');
  const { createOAuthRouter } = await import('../../src/router.js');
  const { createTestUserAuth } = await import('../helpers/app.js');
  const oauth = createOAuthRouter(t.store, createTestUserAuth(new Set()), { issuer: 'http://auth.test', rememberConsent: false, logger: { warn() {}, error() {} } });
  const app = express();
  app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
  extend(app);
  app.use(oauth.router);
  const browser = new CookieBrowser(app);
  const login = await browser.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
  await browser.post('/oauth2/login', {
    csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
    username: USER.username, password: USER.password,
  });
  return { app, browser };
}

describe('sign-out: POST /oauth2/logout (RFC 6749 §10.12, RFC 6819 §4.4.1.4)', () => {
  beforeEach(async () => { await createApp({ rememberConsent: false }); });

  it('is offered on the connected-applications page as a form with the session\'s CSRF token', async () => {
    const browser = await signedIn();
    const page = await browser.get('/oauth2/consents');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<form method="post" action="\/oauth2\/logout">\s*<input type="hidden" name="csrf_token" value="[^"]+">/);
    expect(page.text).toContain('Sign out');
  });

  it('ends the session: the store forgets it, the cookie is cleared, and the next request asks to sign in', async () => {
    const browser = await signedIn();
    const cookie = browser.cookies.get(SESSION_COOKIE)!;
    const page = await browser.get('/oauth2/consents');
    expect(sessions.size).toBe(1);
    const res = await browser.post('/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(res.status).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('You are signed out');
    expect(setCookieLine(res)).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(sessions.size).toBe(0);
    expect(isLoginPage(await authorizePage(browser))).toBe(true);
    // The cookie from before, kept by whoever had it, signs nobody in.
    const replayed = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`).set('Cookie', `${SESSION_COOKIE}=${cookie}`);
    expect(isLoginPage(replayed)).toBe(true);
  });

  it('stops remembered consent from answering silently after the sign-out', async () => {
    await createApp();
    const callback = await authorize(t.app, t.codeClient);
    expect(callback.searchParams.get('code')).toBeTruthy();
    const browser = await signedIn();
    expect((await authorizePage(browser)).status).toBe(302); // remembered: a code without a page
    const page = await browser.get('/oauth2/consents');
    await browser.post('/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(isLoginPage(await authorizePage(browser))).toBe(true);
  });

  /** Holds the next call of `target[method]` until released; resolves `reached` once it is called. */
  function holdNext<T extends object>(target: T, method: keyof T & string): { reached: Promise<void>; release: () => void } {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => { reach = resolve; });
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const original = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
    (target as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      (target as Record<string, unknown>)[method] = original;
      reach();
      await gate;
      return original(...args);
    };
    return { reached, release };
  }

  it('stays signed out when an Allow that was issuing its code meanwhile ends (its session is not written back)', async () => {
    const browser = await signedIn();
    const page = await authorizePage(browser);
    const held = holdNext(t.store.codes, 'saveCode');
    const allow = browser.post('/oauth2/consent', {
      csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), decision: 'allow',
    });
    await held.reached;
    const out = await browser.post('/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(out.text).toContain('You are signed out');
    held.release();
    // Clicked before the sign-out: the Allow is still answered, but its end no longer saves the ended session.
    expect((await allow).headers.location).toMatch(/code=/);
    expect(sessions.size).toBe(0);
    expect(isLoginPage(await authorizePage(browser))).toBe(true);
  });

  it('stays signed out when another request of the session (a second tab, a stolen cookie) was being answered meanwhile', async () => {
    const browser = await signedIn();
    const page = await browser.get('/oauth2/consents');
    const other = new CookieBrowser(t.app);
    other.cookies.set(SESSION_COOKIE, browser.cookies.get(SESSION_COOKIE)!);
    const held = holdNext(t.store.clients, 'findClient');
    const pending = authorizePage(other);
    await held.reached;
    await browser.post('/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') });
    held.release();
    await pending;
    expect(sessions.size).toBe(0);
    expect(isLoginPage(await authorizePage(other))).toBe(true);
  });

  it('keeps the session a new sign-in replaced ended, though a request of it was being answered meanwhile', async () => {
    const browser = await signedIn();
    const other = new CookieBrowser(t.app);
    other.cookies.set(SESSION_COOKIE, browser.cookies.get(SESSION_COOKIE)!);
    const held = holdNext(t.store.clients, 'findClient');
    const pending = authorizePage(other);
    await held.reached;
    // Signed in again (prompt=login): the session gets a new id, and the old one ends.
    const login = await browser.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { prompt: 'login' })}`);
    const posted = await browser.post('/oauth2/login', {
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(posted.status).toBe(303);
    held.release();
    await pending;
    expect(sessions.size).toBe(1);
    expect(isLoginPage(await authorizePage(other))).toBe(true);
    expect(isConsentPage(await authorizePage(browser))).toBe(true);
  });

  it('refuses a sign-out without the CSRF token, or with a wrong one, with 403, and the user stays signed in', async () => {
    const browser = await signedIn();
    expect((await browser.post('/oauth2/logout', {})).status).toBe(403);
    expect((await browser.post('/oauth2/logout', { csrf_token: 'A'.repeat(43) })).status).toBe(403);
    expect(isConsentPage(await authorizePage(browser))).toBe(true);
  });

  it('signs nobody out on a forged cross-site POST (a browser without the session): nothing to end', async () => {
    const browser = await signedIn();
    const page = await browser.get('/oauth2/consents');
    const forged = await request(t.app).post('/oauth2/logout').type('form').send({ csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(forged.status).toBe(200);
    expect(isConsentPage(await authorizePage(browser))).toBe(true);
  });

  it('never redirects, whatever the request asks for (no open redirect)', async () => {
    const browser = await signedIn();
    const page = await browser.get('/oauth2/consents');
    const res = await browser.post('/oauth2/logout', {
      csrf_token: hiddenField(page.text, 'csrf_token'), return_to: 'https://evil.example/', post_logout_redirect_uri: 'https://evil.example/',
    });
    expect(res.status).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).not.toContain('evil.example');
  });

  it('is served at the legacy base address too', async () => {
    const browser = await signedIn('/legacy');
    const page = await browser.get('/legacy/oauth2/consents');
    const res = await browser.post('/legacy/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(res.status).toBe(200);
    expect(isLoginPage(await authorizePage(browser, '/legacy'))).toBe(true);
  });

  it('in a host\'s express-session, removes the router\'s sign-in and keeps the host\'s own data', async () => {
    const { browser } = await signedInBehindHostSession((app) => {
      app.get('/host/remember', (req, res) => { (req.session as unknown as { hostNote: string }).hostNote = 'kept'; res.send('ok'); });
      app.get('/host/note', (req, res) => { res.send((req.session as unknown as { hostNote?: string }).hostNote ?? 'none'); });
    });
    await browser.get('/host/remember');
    const page = await browser.get('/oauth2/consents');
    expect((await browser.post('/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') })).status).toBe(200);
    expect(isLoginPage(await browser.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`))).toBe(true);
    expect((await browser.get('/host/note')).text).toBe('kept');
  });

  it('in a host\'s express-session, stays signed out when a request of the session was being answered meanwhile', async () => {
    const { app, browser } = await signedInBehindHostSession();
    const page = await browser.get('/oauth2/consents');
    const other = new CookieBrowser(app);
    other.cookies.set('connect.sid', browser.cookies.get('connect.sid')!);
    const held = holdNext(t.store.clients, 'findClient');
    const pending = other.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    await held.reached;
    expect((await browser.post('/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') })).status).toBe(200);
    held.release();
    await pending;
    expect(isLoginPage(await other.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`))).toBe(true);
    expect(isLoginPage(await browser.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`))).toBe(true);
  });
});

describe('"use another account" on the consent page (RFC 6749 §3.1: the resource owner\'s identity, verified anew)', () => {
  beforeEach(async () => { await createApp({ rememberConsent: false }); });

  const consentForm = (page: PageResponse, decision: string) => ({
    csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), decision,
  });

  it('is offered after the router\'s own sign-in, naming who is signed in', async () => {
    const page = await authorizePage(await signedIn());
    expect(isConsentPage(page)).toBe(true);
    expect(page.text).toContain(`Not <bdi>${USER.displayName}</bdi>? <button type="submit" name="decision" value="switch" class="link">Use another account</button>`);
  });

  it('signs the browser out and sends it back to the same authorization request, which asks who is there', async () => {
    const browser = await signedIn();
    const page = await authorizePage(browser);
    expect(sessions.size).toBe(1);
    const res = await browser.post('/oauth2/consent', consentForm(page, 'switch'));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(setCookieLine(res)).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(sessions.size).toBe(0);
    const next = await browser.get(res.headers.location!);
    expect(isLoginPage(next)).toBe(true);
    // Neither answer went to the integration: signing in again reaches the consent page of the same request.
    const again = await browser.post('/oauth2/login', {
      csrf_token: hiddenField(next.text, 'csrf_token'), request_id: hiddenField(next.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(again.status).toBe(303);
    expect(isConsentPage(await browser.get(again.headers.location!))).toBe(true);
  });

  it('still signs out from this session\'s own form whose request was answered meanwhile (Back after Allow)', async () => {
    const browser = await signedIn();
    const page = await authorizePage(browser);
    const allowed = await browser.post('/oauth2/consent', consentForm(page, 'allow'));
    expect(new URL(allowed.headers.location!).searchParams.get('code')).toBeTruthy();
    const res = await browser.post('/oauth2/consent', { ...consentForm(page, 'switch'), resume: hiddenField(page.text, 'resume') });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(sessions.size).toBe(0);
    expect(isLoginPage(await browser.get(res.headers.location!))).toBe(true);
  });

  it('keeps the request\'s parameters (state, PKCE, scope, prompt) across the switch, byte for byte', async () => {
    const browser = await signedIn();
    const query = authorizeQuery(t.codeClient, { state: 'a b&c', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', prompt: 'consent' });
    const page = await browser.get(`/oauth2/authorize?${query}`);
    const res = await browser.post('/oauth2/consent', consentForm(page, 'switch'));
    expect(res.headers.location).toBe(`/oauth2/authorize?${new URLSearchParams(query).toString()}`);
  });

  it('signs nobody out on a form whose CSRF token is not the session\'s: the request is asked again, signed in', async () => {
    const browser = await signedIn();
    const page = await authorizePage(browser);
    const res = await browser.post('/oauth2/consent', { ...consentForm(page, 'switch'), csrf_token: 'A'.repeat(43), resume: hiddenField(page.text, 'resume') });
    expect(res.status).toBe(303);
    expect(new URL(res.headers.location!, 'http://auth.test').searchParams.get('prompt')).toBe('consent');
    expect(sessions.size).toBe(1);
    expect(isConsentPage(await browser.get(res.headers.location!))).toBe(true);
  });

  it('an Allow sent while the switch is answered gets the switch\'s answer: no code, and the sign-in stays ended', async () => {
    // The switch's session destroy waits until the Allow has loaded the session (so both found the request pending).
    let reached!: () => void;
    const atDestroy = new Promise<void>((resolve) => { reached = resolve; });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const browser = await signedIn();
    const page = await authorizePage(browser);
    const destroy = sessions.destroy.bind(sessions);
    sessions.destroy = (sid, callback) => {
      reached();
      void gate.then(() => destroy(sid, callback));
    };
    const switched = browser.post('/oauth2/consent', consentForm(page, 'switch'));
    await atDestroy;
    const allow = browser.post('/oauth2/consent', consentForm(page, 'allow'));
    // Answered at once, with a code, without the guard; waited for with it (the fallback only bounds the test).
    await Promise.race([allow, new Promise((resolve) => setTimeout(resolve, 300))]);
    release();
    const [first, second] = await Promise.all([switched, allow]);
    expect(first.status).toBe(303);
    expect(second.status).toBe(303);
    expect(second.headers.location).toBe(first.headers.location);
    // The waiting POST's copy of the session did not bring the sign-in back.
    expect(sessions.size).toBe(0);
    expect(isLoginPage(await browser.get(first.headers.location!))).toBe(true);
  });

  it('an Allow whose session was loaded before the switch ended it (its body still arriving) issues nothing and signs nobody back in', async () => {
    const { createConnection } = await import('node:net');
    const browser = await signedIn();
    const page = await authorizePage(browser);
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      let loads = 0;
      const get = sessions.get.bind(sessions);
      sessions.get = (sid, callback) => { loads += 1; get(sid, callback); };
      // The Allow's headers and the first bytes of its body: the router loads the session, then waits for the form.
      const allowBody = new URLSearchParams({ ...consentForm(page, 'allow'), resume: hiddenField(page.text, 'resume') }).toString();
      const socket = createConnection(port, '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => { answer += chunk; });
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST /oauth2/consent HTTP/1.1\r\nHost: auth.test\r\nConnection: close\r\nCookie: ${SESSION_COOKIE}=${browser.cookies.get(SESSION_COOKIE)}\r\n`
        + `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${allowBody.length}\r\n\r\n${allowBody.slice(0, 10)}`);
      await vi.waitFor(() => { expect(loads).toBe(1); });
      const switched = await browser.post('/oauth2/consent', consentForm(page, 'switch'));
      expect(switched.status).toBe(303);
      expect(sessions.size).toBe(0);
      socket.write(allowBody.slice(10));
      await new Promise((resolve) => socket.once('close', resolve));
      const [head] = answer.split('\r\n\r\n');
      // Answered as a form whose session has ended: asked again from the start, no code, no cookie, nothing saved.
      expect(head).toMatch(/^HTTP\/1\.1 303 /);
      expect(head).not.toMatch(/code=/);
      expect(head).not.toMatch(/set-cookie: oauth\.sid=/i);
      expect(sessions.size).toBe(0);
      expect(isLoginPage(await browser.get(switched.headers.location!))).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is not offered after the host\'s sign-in (currentUser), which only the host can end; a forged switch only asks again', async () => {
    const { default: express } = await import('express');
    const { createOAuthRouter } = await import('../../src/router.js');
    let hostUser: { id: string; displayName: string } | null = { id: 'host-7', displayName: 'Host Seven' };
    const oauth = createOAuthRouter(t.store, {
      currentUser: async () => hostUser,
      loginUrl: (_req, returnTo) => `/account/login?return_to=${encodeURIComponent(returnTo)}`,
    }, { issuer: 'http://auth.test', rememberConsent: false, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} } });
    const app = express();
    app.use(oauth.router);
    const browser = new CookieBrowser(app);
    const page = await browser.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(isConsentPage(page)).toBe(true);
    expect(page.text).toContain('Host Seven');
    expect(page.text).not.toContain('value="switch"');
    const res = await browser.post('/oauth2/consent', consentForm(page, 'switch'));
    expect(res.status).toBe(303);
    expect(new URL(res.headers.location!, 'http://auth.test').searchParams.get('prompt')).toBe('consent');
    const again = await browser.get(res.headers.location!);
    expect(isConsentPage(again)).toBe(true);
    expect(again.text).toContain('Host Seven');
    // Signed out by the host meanwhile: still nothing of the router's to end, the request is only asked again.
    hostUser = null;
    const afterHostSignOut = await browser.post('/oauth2/consent', consentForm(again, 'switch'));
    expect(afterHostSignOut.status).toBe(303);
    expect(new URL(afterHostSignOut.headers.location!, 'http://auth.test').searchParams.get('prompt')).toBe('consent');
  });
});

describe('session lifetimes: session.idleTtl and session.absoluteTtl (OWASP idle and absolute timeouts)', () => {
  // The test clock: only Date moves; the server's own checks, not the cookie's expiry, end the sign-in (the
  // test browser replays its cookies whatever their Expires says).
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await createApp({ rememberConsent: false, session: { idleTtl: 60, absoluteTtl: 120 } });
  });
  afterEach(() => { vi.useRealTimers(); });
  const later = (seconds: number) => vi.setSystemTime(Date.now() + seconds * 1000);

  it('keeps a sign-in that is used within the idle lifetime', async () => {
    const browser = await signedIn();
    later(50);
    expect(isConsentPage(await authorizePage(browser))).toBe(true);
    later(50);
    expect(isConsentPage(await authorizePage(browser))).toBe(true);
  });

  it('asks to sign in again after idleTtl without use, even with the cookie replayed', async () => {
    const browser = await signedIn();
    later(61);
    expect(isLoginPage(await authorizePage(browser))).toBe(true);
  });

  it('asks to sign in again after idleTtl even from a session store that never expires anything', async () => {
    const forever = new NeverExpiringStore();
    t = await createTestApp({ rememberConsent: false, session: { secret: 'test-session-secret-0123456789', store: forever, idleTtl: 60, absoluteTtl: 120 } });
    const browser = await signedIn();
    later(61);
    expect(isLoginPage(await authorizePage(browser))).toBe(true);
  });

  it('asks to sign in again after absoluteTtl however active the user was', async () => {
    const browser = await signedIn();
    for (let i = 0; i < 2; i += 1) {
      later(50);
      expect(isConsentPage(await authorizePage(browser))).toBe(true);
    }
    later(25); // 125 s after the sign-in, 25 s after the last use
    expect(isLoginPage(await authorizePage(browser))).toBe(true);
  });

  it('refuses the consent form of a sign-in that expired meanwhile', async () => {
    const browser = await signedIn();
    const consent = await authorizePage(browser);
    later(61);
    const res = await browser.post('/oauth2/consent', {
      csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'), decision: 'allow',
    });
    expect(res.headers.location ?? '').not.toMatch(/code=/);
    expect(res.status).toBeGreaterThanOrEqual(400);
  });

  it('rolls the cookie with each use, for idleTtl', async () => {
    const browser = await signedIn();
    const res = await authorizePage(browser);
    expect(setCookieLine(res)).toMatch(/Max-Age=60\b|Expires=/);
  });
});

describe('session lifetime options', () => {
  const base = { issuer: 'https://auth.example.com' };
  it('default to 30 minutes idle and 8 hours absolute', () => {
    expect(resolveOptions(base).session).toMatchObject({ idleTtl: 1800, absoluteTtl: 28800 });
  });

  it('accept the former session.ttl as the idle lifetime', () => {
    expect(resolveOptions({ ...base, session: { ttl: 900 } }).session).toMatchObject({ idleTtl: 900, absoluteTtl: 28800 });
  });

  it.each([
    [{ idleTtl: 0 }, 'session.idleTtl'],
    [{ idleTtl: 1.5 }, 'session.idleTtl'],
    [{ absoluteTtl: -1 }, 'session.absoluteTtl'],
    [{ idleTtl: 3600, absoluteTtl: 600 }, 'session.absoluteTtl'],
    [{ ttl: 600, idleTtl: 600 }, 'session.ttl'],
  ])('refuse %j at start-up, naming %s', (session, key) => {
    expect(() => resolveOptions({ ...base, session })).toThrow(OptionsError);
    expect(() => resolveOptions({ ...base, session })).toThrow(`"${key}"`);
  });
});
