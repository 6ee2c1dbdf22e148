// SPEC §4.1, the forms and pages: CSRF (RFC 6749 §10.12), cookies and headers, escaping, session fixation.
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import request from 'supertest';
import { createTestApp, REDIRECT_URI, USER, type TestApp } from '../helpers/app.js';
import { authorizeQuery, hiddenField, signInAndGetConsent } from '../helpers/browser-flow.js';
import { CookieBrowser } from '../helpers/cookie-browser.js';
import {
  getAuthorize, signedInAtConsent, cookieValue, expectErrorPage, expectRedirectTo, openLoginForm, postConsent, postLogin,
  SESSION_COOKIE, setCookieLine,
} from '../helpers/spec-requests.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { createHash } from 'node:crypto';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});

describe('RFC 6749 §10.12: CSRF protection of the login and consent forms', () => {
  it('refuses a login POST without csrf_token with 403 and signs nobody in', async () => {
    const agent = request.agent(t.app);
    const query = authorizeQuery(t.codeClient);
    const login = await openLoginForm(agent, '', query);
    const res = await postLogin(agent, '', { request_id: login.requestId });
    expectErrorPage(res, 403);
    const again = await agent.get(`/oauth2/authorize?${query}`);
    expect(again.text).toMatch(/name="password"/);
  });

  it('refuses a login POST with a wrong csrf_token with 403', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const res = await postLogin(agent, '', { csrf_token: `${login.csrfToken}x`, request_id: login.requestId });
    expectErrorPage(res, 403);
  });

  it('refuses a login POST carrying another session\'s csrf_token with 403', async () => {
    const victim = request.agent(t.app);
    const attacker = request.agent(t.app);
    const mine = await openLoginForm(victim, '', authorizeQuery(t.codeClient));
    const theirs = await openLoginForm(attacker, '', authorizeQuery(t.codeClient));
    const res = await postLogin(victim, '', { csrf_token: theirs.csrfToken, request_id: mine.requestId });
    expectErrorPage(res, 403);
  });

  it('refuses a login POST with an unknown request_id with 400', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const res = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: 'no-such-request' });
    expectErrorPage(res, 400);
  });

  it('refuses a consent POST without csrf_token with 403 and issues no code', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const res = await postConsent(agent, '', { request_id: consent.requestId, decision: 'allow' });
    expectErrorPage(res, 403);
    expect(res.text).not.toMatch(/code=/);
  });

  it('refuses a consent POST with a wrong csrf_token with 403 and issues no code', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const res = await postConsent(agent, '', { csrf_token: 'A'.repeat(43), request_id: consent.requestId, decision: 'allow' });
    expectErrorPage(res, 403);
    // The request itself is still pending: the genuine form still works once.
    const genuine = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    expect(expectRedirectTo(genuine).searchParams.get('code')).toBeTruthy();
  });

  it('refuses a consent POST from a browser without the session (forged cross-site POST) with 403', async () => {
    const { consent } = await signedInAtConsent(t.app, t.codeClient);
    const res = await request(t.app).post('/oauth2/consent').type('form')
      .send({ csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    expectErrorPage(res, 403);
  });

  it('refuses a consent POST with an unknown request_id with 400', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const res = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: 'no-such-request', decision: 'allow' });
    expectErrorPage(res, 400);
  });

  it('answers a request_id once: a second consent POST for the same id gets 400 and no second code, a Deny after the Allow 409', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const fields = { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' };
    const first = await postConsent(agent, '', fields);
    expect(expectRedirectTo(first).searchParams.get('code')).toBeTruthy();
    const second = await postConsent(agent, '', fields);
    expectErrorPage(second, 400);
    const afterDeny = await postConsent(agent, '', { ...fields, decision: 'deny' });
    expect(expectErrorPage(afterDeny, 409)).toContain('You already allowed this request');
  });

  it('refuses a form the browser marks Sec-Fetch-Site: cross-site or same-site with 403, valid token and all; same-origin passes', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const fields = { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' };
    const crossSite = await postConsent(agent, '', fields).set('Sec-Fetch-Site', 'cross-site').set('Origin', 'https://evil.example');
    expect(expectErrorPage(crossSite, 403)).toContain('sent from another site');
    expect(crossSite.headers['x-frame-options']).toBe('DENY');
    // Another port or subdomain of the site: another origin, which SameSite=Lax does not stop (login CSRF with a planted cookie).
    const sameSite = await postConsent(agent, '', fields).set('Sec-Fetch-Site', 'same-site').set('Origin', 'http://localhost:4602');
    expect(expectErrorPage(sameSite, 403)).toContain('sent from another site or address');
    for (const site of ['cross-site', 'same-site']) {
      for (const path of ['/oauth2/login', '/oauth2/logout', '/oauth2/consents/withdraw']) {
        expectErrorPage(await agent.post(path).type('form').set('Sec-Fetch-Site', site).send({ csrf_token: consent.csrfToken }), 403);
      }
    }
    const sameOrigin = await postConsent(agent, '', fields).set('Sec-Fetch-Site', 'same-origin');
    expect(expectRedirectTo(sameOrigin).searchParams.get('code'), 'the request was not used up by the refusal').toBeTruthy();
  });

  it('answers a denied request_id once too: Allow after Deny gets 400', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const deny = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'deny' });
    expect(expectRedirectTo(deny).searchParams.get('error')).toBe('access_denied');
    const allow = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    expectErrorPage(allow, 400);
  });
});

describe('Session cookie and page headers (RFC 6749 §10.13, RFC 6819 §4.4.1.9)', () => {
  const attributesOf = (line: string | undefined) => line!.split(';').map((part) => part.trim().toLowerCase());

  it('sets the session cookie at sign-in, HttpOnly and SameSite=Lax, and not Secure on an http issuer', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    expect(setCookieLine(login.res)).toBeUndefined();
    const posted = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId }).expect(303);
    const attributes = attributesOf(setCookieLine(posted));
    expect(attributes).toContain('httponly');
    expect(attributes).toContain('samesite=lax');
    expect(attributes).not.toContain('secure');
  });

  it('gives the login form its CSRF cookie HttpOnly and SameSite=Lax (it must come with the cross-site navigation of a second tab), and not Secure on an http issuer', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient));
    const attributes = attributesOf(setCookieLine(res, `${SESSION_COOKIE}.csrf`));
    expect(attributes).toContain('httponly');
    expect(attributes).toContain('samesite=lax');
    expect(attributes).toContain('path=/');
    expect(attributes).not.toContain('secure');
  });

  it('sets the cookies Secure on an https issuer behind a TLS-terminating proxy, the session\'s and the login form\'s __Host- prefixed', async () => {
    const secure = await createTestApp({ issuer: 'https://auth.test', legacy: false });
    const browser = new CookieBrowser(secure.app, { 'X-Forwarded-Proto': 'https' });
    const login = await browser.get(`/oauth2/authorize?${authorizeQuery(secure.codeClient)}`);
    const csrfLine = setCookieLine(login, `__Host-${SESSION_COOKIE}.csrf`);
    expect(attributesOf(csrfLine)).toEqual(expect.arrayContaining(['secure', 'path=/', 'httponly']));
    expect(csrfLine).not.toMatch(/domain=/i);
    const posted = await browser.post('/oauth2/login', {
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(posted.status).toBe(303);
    // RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain; a sibling subdomain cannot plant a signed-in session.
    expect(setCookieLine(posted), 'no unprefixed session cookie').toBeUndefined();
    const sessionLine = setCookieLine(posted, `__Host-${SESSION_COOKIE}`);
    expect(attributesOf(sessionLine)).toEqual(expect.arrayContaining(['secure', 'path=/', 'httponly']));
    expect(sessionLine).not.toMatch(/domain=/i);
    // The prefixed cookie is the session: the consent page that follows is answered for the signed-in user.
    const consent = await browser.get(posted.headers.location!);
    expect(consent.text).toContain('name="decision"');
    // Sign-out clears the cookie under the name it was set with.
    const page = await browser.get('/oauth2/consents');
    const out = await browser.post('/oauth2/logout', { csrf_token: hiddenField(page.text, 'csrf_token') });
    expect(setCookieLine(out, `__Host-${SESSION_COOKIE}`)).toMatch(/Expires=Thu, 01 Jan 1970/);
  });

  it('refuses a sign-in that reached an https issuer over plain http, where the Secure session cookie cannot be set, and warns once', async () => {
    const warnings: string[] = [];
    const secure = await createTestApp({ issuer: 'https://auth.test', legacy: false, logger: { warn: (m: string) => warnings.push(m), error() {} } });
    const browser = new CookieBrowser(secure.app);
    const login = await browser.get(`/oauth2/authorize?${authorizeQuery(secure.codeClient)}`);
    const form = {
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    };
    for (let i = 0; i < 2; i += 1) {
      const posted = await browser.post('/oauth2/login', form);
      expect(expectErrorPage(posted, 400)).toContain('secure (https) connection');
      expect(posted.headers['set-cookie'] ?? []).not.toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^${SESSION_COOKIE}=`))]));
    }
    expect(warnings.filter((m) => m.includes('over plain http'))).toHaveLength(1);
  });

  it('refuses a sign-in from a browser on plain http at an https issuer, which never keeps the Secure CSRF cookie, rather than showing the form again', async () => {
    const warnings: string[] = [];
    const secure = await createTestApp({ issuer: 'https://auth.test', legacy: false, logger: { warn: (m: string) => warnings.push(m), error() {} } });
    // RFC 6265bis §5.7: a browser drops a Secure (and a __Host-) cookie an insecure origin sets, so no jar here.
    const login = await request(secure.app).get(`/oauth2/authorize?${authorizeQuery(secure.codeClient)}`);
    expect(setCookieLine(login, `__Host-${SESSION_COOKIE}.csrf`)).toMatch(/Secure/);
    const form = {
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    };
    const posted = await request(secure.app).post('/oauth2/login').type('form').send(form);
    expect(expectErrorPage(posted, 400)).toContain('secure (https) connection');
    expect(warnings.filter((m) => m.includes('over plain http'))).toHaveLength(1);
  });

  it.each([
    ['login page', async () => getAuthorize(t.app, authorizeQuery(t.codeClient))],
    ['consent page', async () => {
      const agent = request.agent(t.app);
      await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient));
      return agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    }],
    ['error page', async () => getAuthorize(t.app, authorizeQuery(t.codeClient, { client_id: 'unknown' }))],
  ])('sends the %s with X-Frame-Options: DENY and a CSP with frame-ancestors \'none\'', async (_label, load) => {
    const res = await load();
    expect(res.headers['x-frame-options']).toBe('DENY');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toBeDefined();
    expect(csp.split(';').map((d) => d.trim())).toContain("frame-ancestors 'none'");
    expect(res.headers['cache-control']).toMatch(/no-store/);
  });

  it.each([
    ['login page', (agent: request.Agent) => agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`), 200],
    ['error page', (agent: request.Agent) => agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { client_id: 'unknown' })}`), 400],
    ['connected-applications page', (agent: request.Agent) => agent.get('/oauth2/consents'), 200],
  ])('sends the %s with no ETag (no-store: nothing may revalidate it), and If-None-Match never makes it a 304 without the page', async (_label, load, status) => {
    const agent = request.agent(t.app);
    await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient));
    const res = await load(agent);
    expect(res.status).toBe(status);
    expect(res.headers.etag).toBeUndefined();
    const conditional = await load(agent).set('If-None-Match', '*');
    expect(conditional.status).toBe(status);
    expect(conditional.text).toContain('</html>');
  });
});

describe('RFC 9111 §5.2.2.5: the authorization endpoint\'s page during a store outage is no more conditional than its other pages', () => {
  it.each([
    ['without pageLanguages', {}],
    ['with an asynchronous choose()', { pageLanguages: { catalogues: { de: { errorTitle: 'Fehler' } }, choose: async () => 'de' } }],
  ] as const)('the 503 page (%s) carries no ETag, and If-None-Match (* or a validator of the page) never makes it a 304 without the page', async (_label, options) => {
    const memory = createMemoryStore();
    const store = { ...memory, clients: { ...memory.clients, findClient: async () => { throw new StoreUnavailableError('clients out for the test'); } } };
    const down = await createTestApp({ logger: { warn() {}, error() {} }, ...options }, store);
    const url = `/oauth2/authorize?${authorizeQuery(down.codeClient)}`;
    const page = await request(down.app).get(url);
    expect(page.status).toBe(503);
    expect(page.headers.etag).toBeUndefined();
    expect(page.headers['cache-control']).toBe('no-store');
    // The weak validator Express's res.send would have given this very body.
    const body = Buffer.from(page.text, 'utf8');
    const validator = `W/"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').slice(0, 27)}"`;
    for (const ifNoneMatch of ['*', validator]) {
      const conditional = await request(down.app).get(url).set('If-None-Match', ifNoneMatch);
      expect(conditional.status).toBe(503);
      expect(conditional.headers.etag).toBeUndefined();
      expect(conditional.text).toContain('</html>');
    }
  });
});

describe('HTML escaping of values from outside', () => {
  it('escapes an integration name on the consent and login pages', async () => {
    const { client, clientSecret } = await registerClient(t.store, {
      name: '<script>alert(1)</script>', flow: 'authorization_code', redirectUris: [REDIRECT_URI], allowedScopes: ['envelopes:read'],
    });
    const evil = { clientId: client.clientId, clientSecret };
    const login = await getAuthorize(t.app, authorizeQuery(evil));
    expect(login.text).not.toContain('<script>alert(1)</script>');
    expect(login.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(evil));
    expect(consent).not.toContain('<script>');
    expect(consent).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('escapes the username echoed on a failed login page', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const res = await postLogin(agent, '', {
      csrf_token: login.csrfToken, request_id: login.requestId, username: '"><img src=x onerror=alert(1)>', password: 'x',
    });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('<img src=x');
    expect(res.text).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
  });

  it('shows the username again cut to 200 code units, never splitting a character, and controls as U+FFFD', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    // An emoji (two UTF-16 code units) across the 200th unit: cut in half, its first half went out as U+FFFD.
    const long = `${'a'.repeat(199)}\u{1F600}tail`;
    const cut = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId, username: long, password: 'x' });
    expect(cut.status).toBe(400);
    expect(cut.text).toContain(`value="${'a'.repeat(199)}"`);
    expect(cut.text).not.toContain('\uFFFD');
    const again = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const res = await postLogin(agent, '', { csrf_token: again.csrfToken, request_id: again.requestId, username: 'a\u0000b\u0007c', password: 'x' });
    expect(res.status).toBe(400);
    // A NUL or BEL is a parse error in an HTML attribute value: the page carries none.
    expect(res.text).not.toMatch(/[\0\x07]/);
    expect(res.text).toContain('value="a\uFFFDb\uFFFDc"');
  });
});

describe('Session fixation (RFC 6819 §4.4.1.4 / OWASP): a new session id at login', () => {
  // An idle session is the one a browser can bring to a sign-in: the test clock moves past its idle lifetime.
  afterEach(() => { vi.useRealTimers(); });

  it('gives a new session id at sign-in even when the browser brings one, and the old id signs nobody in', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const browser = new CookieBrowser(t.app);
    const query = authorizeQuery(t.codeClient);
    const signIn = async () => {
      const login = await browser.get(`/oauth2/authorize?${query}`);
      expect(login.text).toMatch(/name="password"/);
      const posted = await browser.post('/oauth2/login', {
        csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
        username: USER.username, password: USER.password,
      });
      expect(posted.status).toBe(303);
      return cookieValue(posted)!;
    };
    const first = await signIn();
    vi.setSystemTime(Date.now() + 31 * 60 * 1000); // past the default idle lifetime of 30 minutes
    expect(browser.cookies.get(SESSION_COOKIE)).toBe(first);
    const second = await signIn();
    expect(second).not.toBe(first);
    const replayed = await request(t.app).get(`/oauth2/authorize?${query}`).set('Cookie', `${SESSION_COOKIE}=${first}`);
    expect(replayed.status).toBe(200);
    expect(replayed.text).toMatch(/name="password"/);
    expect(replayed.text).not.toContain('name="decision"');
  });
});

describe('RFC 9110 §15.5.6: a page address opened with another method gets a 405 page, not a bare 404', () => {
  it('HEAD /oauth2/authorize, a safe method, issues no code where the same GET would (remembered consent): 405, Allow: GET', async () => {
    const agent = request.agent(t.app);
    const query = authorizeQuery(t.codeClient);
    const page = await signInAndGetConsent(agent, '', query);
    const approved = await postConsent(agent, '', { csrf_token: hiddenField(page, 'csrf_token'), request_id: hiddenField(page, 'request_id'), decision: 'allow' });
    expect(new URL(approved.headers.location!).searchParams.get('code')).toBeTruthy();
    const saveCode = vi.spyOn(t.store.codes, 'saveCode');
    const head = await agent.head(`/oauth2/authorize?${query}`);
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET');
    expect(head.headers.location).toBeUndefined();
    expect(saveCode).not.toHaveBeenCalled();
    // The same request by GET still gets its code at once: the consent is remembered.
    const get = await agent.get(`/oauth2/authorize?${query}`);
    expect(get.status).toBe(302);
    expect(new URL(get.headers.location!).searchParams.get('code')).toBeTruthy();
    expect(saveCode).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['GET', '/oauth2/login', 'POST'],
    ['GET', '/oauth2/consent', 'POST'],
    ['GET', '/oauth2/logout', 'POST'],
    ['GET', '/oauth2/consents/withdraw', 'POST'],
    ['POST', '/oauth2/authorize', 'GET'],
    ['PUT', '/oauth2/consents', 'GET, HEAD'],
  ] as const)('%s %s answers 405, Allow: %s, on the styled page with the page headers', async (method, path, allow) => {
    const res = await request(t.app)[method === 'GET' ? 'get' : method === 'POST' ? 'post' : 'put'](path);
    const page = expectErrorPage(res, 405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toMatch(/no-store/);
    expect(page).not.toMatch(/Cannot (GET|POST|PUT)/);
    expect(page).toContain('invalid_request');
  });
});
