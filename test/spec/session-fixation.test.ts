// RFC 6749 §10.12, RFC 6819 §4.4.1.4: nothing an attacker planted before a sign-in survives it.
import express from 'express';
import session from 'express-session';
import { beforeEach, describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createTestApp, createTestRouter, type TestApp, type TestClient } from '../helpers/app.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import { CookieBrowser, type PageResponse } from '../helpers/cookie-browser.js';
import { USER } from '../helpers/app.js';
import { registerClient } from '../../src/clients/register-client.js';
import { hostSessionUserAuth } from '../helpers/host-login.js';
import { HeldSessionStore } from '../helpers/held-session-store.js';

const ATTACKER_REDIRECT = 'https://attacker.example/cb';

let t: TestApp;
let attackerClient: TestClient;
beforeEach(async () => {
  t = await createTestApp();
  const { client, clientSecret } = await registerClient(t.store, {
    name: 'Mallory Tools', flow: 'authorization_code', redirectUris: [ATTACKER_REDIRECT],
  });
  attackerClient = { clientId: client.clientId, clientSecret };
});

/** Where a consent POST sent the browser, if it issued a code for the attacker's integration. */
function attackerCode(res: PageResponse): string | null {
  const location = res.headers.location;
  if (res.status !== 302 || !location?.startsWith(ATTACKER_REDIRECT)) return null;
  return new URL(location).searchParams.get('code');
}

/**
 * The attacker opens an authorization request for his own integration, keeps its form fields, and plants his
 * cookies in the victim's browser; the victim then signs in for another application with them.
 */
async function plantedSignIn() {
  const attacker = new CookieBrowser(t.app);
  const bait = await attacker.get(`/oauth2/authorize?${authorizeQuery(attackerClient, { redirect_uri: ATTACKER_REDIRECT })}`);
  expect(bait.status).toBe(200);
  const planted = { csrfToken: hiddenField(bait.text, 'csrf_token'), requestId: hiddenField(bait.text, 'request_id') };

  const victim = new CookieBrowser(t.app);
  victim.plantCookiesOf(attacker);
  const login = await victim.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
  expect(login.status).toBe(200);
  const signedIn = await victim.post('/oauth2/login', {
    csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
    username: USER.username, password: USER.password,
  });
  expect(signedIn.status).toBe(303);
  const consent = await victim.get(signedIn.headers.location!);
  expect(consent.status).toBe(200);
  expect(consent.text).toContain('Acme CRM');
  return { victim, planted, consent: { csrfToken: hiddenField(consent.text, 'csrf_token'), requestId: hiddenField(consent.text, 'request_id') } };
}

describe('session fixation with CSRF carry-over (RFC 6749 §10.12, RFC 6819 §4.4.1.4)', () => {
  it('refuses a consent form with the pre-login CSRF token and request id of a planted cookie: no code for the attacker', async () => {
    const { victim, planted } = await plantedSignIn();
    const forged = await victim.post('/oauth2/consent', { csrf_token: planted.csrfToken, request_id: planted.requestId, decision: 'allow' });
    expect(attackerCode(forged)).toBeNull();
    expect(forged.status).toBe(403);
  });

  it('gives a fresh CSRF token at sign-in: the token from before it is no longer accepted', async () => {
    const { planted, consent } = await plantedSignIn();
    expect(consent.csrfToken).not.toBe(planted.csrfToken);
  });

  it('keeps no authorization request from before the sign-in: even with the fresh token, the planted request is unknown', async () => {
    const { victim, planted, consent } = await plantedSignIn();
    const forged = await victim.post('/oauth2/consent', { csrf_token: consent.csrfToken, request_id: planted.requestId, decision: 'allow' });
    expect(attackerCode(forged)).toBeNull();
    expect(forged.status).toBe(400);
  });

  it('still lets the victim answer the one request being resumed', async () => {
    const { victim, consent } = await plantedSignIn();
    const allowed = await victim.post('/oauth2/consent', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    expect(allowed.status).toBe(303);
    expect(allowed.headers.location).toMatch(/^https:\/\/client\.example\/callback\?code=/);
  });
});

describe('session fixation through the host\'s own login (currentUser and loginUrl)', () => {
  /** A host whose login does not regenerate its express-session (many do not): the cookie stays the same. */
  async function createCarelessHost() {
    const store = createMemoryStore();
    const register = async (name: string, redirectUri: string) => {
      const { client, clientSecret } = await registerClient(store, { name, flow: 'authorization_code', redirectUris: [redirectUri] });
      return { clientId: client.clientId, clientSecret };
    };
    const userAuth = hostSessionUserAuth();
    const app = express();
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
    app.post('/account/login', express.urlencoded({ extended: false }), (req, res) => {
      (req.session as unknown as { hostUser?: string }).hostUser = String(req.body.user);
      const returnTo = String(req.query.return_to ?? '/');
      res.redirect(303, returnTo.startsWith('/') && !returnTo.startsWith('//') ? returnTo : '/');
    });
    app.use(createOAuthRouter(store, userAuth, { issuer: 'http://auth.test', logger: { warn() {}, error() {} } }).router);
    return { app, victimsApp: await register('Acme CRM', 'https://client.example/callback'), attackersApp: await register('Mallory Tools', ATTACKER_REDIRECT) };
  }

  /** Opens an authorization request, signs in at the host as `user` unless signed in, and returns the consent form. */
  async function consentAs(browser: CookieBrowser, client: TestClient, user: string, redirectUri: string) {
    let consent = await browser.get(`/oauth2/authorize?${authorizeQuery(client, { redirect_uri: redirectUri })}`);
    if (consent.status === 303) {
      const back = await browser.post(consent.headers.location!, { user });
      consent = await browser.get(back.headers.location!);
    }
    expect(consent.status).toBe(200);
    expect(consent.text).toContain(`Host user ${user}`);
    return { csrfToken: hiddenField(consent.text, 'csrf_token'), requestId: hiddenField(consent.text, 'request_id') };
  }

  it('refuses the consent form a previous user of the planted session opened, once the host signed somebody else in', async () => {
    const host = await createCarelessHost();
    const attacker = new CookieBrowser(host.app);
    const planted = await consentAs(attacker, host.attackersApp, 'mallory', ATTACKER_REDIRECT);
    const victim = new CookieBrowser(host.app);
    victim.plantCookiesOf(attacker);
    // The victim signs in at the host with the planted cookie, which the host keeps.
    await victim.post('/account/login?return_to=%2F', { user: 'victim' });
    const forged = await victim.post('/oauth2/consent', { csrf_token: planted.csrfToken, request_id: planted.requestId, decision: 'allow' });
    expect(attackerCode(forged)).toBeNull();
    expect(forged.status).toBe(403);
    // The victim's own request starts afresh: a new CSRF token, and only its own request.
    const own = await consentAs(victim, host.victimsApp, 'victim', 'https://client.example/callback');
    expect(own.csrfToken).not.toBe(planted.csrfToken);
    const stale = await victim.post('/oauth2/consent', { csrf_token: own.csrfToken, request_id: planted.requestId, decision: 'allow' });
    expect(attackerCode(stale)).toBeNull();
    expect(stale.status).toBe(400);
  });
});

/**
 * A host on express-session over `sessions`, the router mounted after it (and `routes`, the host's own, before it): the
 * app, the authorization query of a registered integration, and the `login.succeeded` events heard.
 */
async function hostOnSessions(sessions: HeldSessionStore, routes: (app: express.Express) => void = () => {}) {
  const store = createMemoryStore();
  const oauth = createTestRouter(store);
  const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: ['https://client.example/callback'] });
  const succeeded: unknown[] = [];
  oauth.events.on('login.succeeded', (event) => { succeeded.push(event); });
  const app = express();
  // Typed by this package's loose SessionStoreLike, not @types/express-session's Store; it is one.
  app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false, store: sessions as unknown as session.Store }));
  routes(app);
  app.use(oauth.router);
  return { app, succeeded, query: authorizeQuery({ clientId: client.clientId, clientSecret }) };
}

describe.each(['destroy', 'set'] as const)('a sign-in whose session store fails its %s (an outage), on the host\'s express-session', (method) => {
  it('is no sign-in: the outage page, no login.succeeded, nobody signed in; the browser keeps a live session with the host\'s data', async () => {
    const sessions = new HeldSessionStore();
    const { app, succeeded, query } = await hostOnSessions(sessions, (host) => {
      host.post('/host/note', (req, res) => { (req.session as unknown as { note?: string }).note = 'kept'; res.status(204).end(); });
      host.get('/host/note', (req, res) => { res.json({ note: (req.session as unknown as { note?: string }).note ?? null }); });
    });
    const browser = new CookieBrowser(app);
    expect((await browser.post('/host/note', {})).status).toBe(204);
    const page = await browser.get(`/oauth2/authorize?${query}`);
    const held = sessions.holdNext(method);
    const posted = browser.post('/oauth2/login', {
      csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: USER.username, password: USER.password,
    });
    await held.reached;
    held.release(new Error('session store unreachable'));
    expect((await posted).status).toBe(500);
    expect(succeeded).toEqual([]);
    expect((await browser.get('/host/note')).body).toEqual({ note: 'kept' });
    const again = await browser.get(`/oauth2/authorize?${query}`);
    expect(again.text, 'nobody signed in: the login page').toContain('name="password"');
  });
});

describe('a sign-in whose session store saves the new session, fails the destroy of the old, then fails express-session\'s own save as the outage page ends', () => {
  it('is no sign-in: the new session the browser holds, still stored with the sign-in, is not taken for one', async () => {
    const sessions = new HeldSessionStore();
    const { app, succeeded, query } = await hostOnSessions(sessions);
    const browser = new CookieBrowser(app);
    const page = await browser.get(`/oauth2/authorize?${query}`);
    const destroy = sessions.holdNext('destroy');
    const posted = browser.post('/oauth2/login', {
      csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: USER.username, password: USER.password,
    });
    await destroy.reached;
    const endSave = sessions.holdNext('set');
    destroy.release(new Error('session store unreachable'));
    const newId = await endSave.reached;
    endSave.release(new Error('session store unreachable'));
    expect((await posted).status).toBe(500);
    expect(succeeded).toEqual([]);
    const stored = await sessions.read(newId);
    expect(stored, 'the store still holds the new session as saved before the destroy').not.toBeNull();
    const again = await browser.get(`/oauth2/authorize?${query}`);
    expect(again.text, 'nobody signed in: the login page').toContain('name="password"');
  });
});
