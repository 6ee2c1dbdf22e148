// Remembered consent, its withdrawal (API and page), the host app's own login, and page content and branding.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import request from 'supertest';
import { basic, createTestApp, ISSUER, REDIRECT_URI, USER, type TestApp } from '../helpers/app.js';
import { expectRedirectTo } from '../helpers/spec-requests.js';
import { authorize, authorizeQuery, hiddenField, obtainCode, signIn, signInAndGetConsent } from '../helpers/browser-flow.js';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { MemorySessionStore } from '../../src/http/memory-session-store.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import { registerClient } from '../../src/clients/register-client.js';
import { hostSessionUserAuth } from '../helpers/host-login.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { UserAuth } from '../../src/user-auth.js';

/** The hidden fields of a consent page's form, to post it again with a decision of the test's choosing. */
function consentFields(consent: string) {
  return { csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), resume: hiddenField(consent, 'resume') };
}

async function exchange(t: TestApp, code: string) {
  return request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
    .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
}

describe('remembered consent', () => {
  let t: TestApp;
  beforeEach(async () => { t = await createTestApp(); });

  it('does not ask a returning user again for the same integration and scopes', async () => {
    await obtainCode(t.app, t.codeClient);
    const agent = request.agent(t.app);
    const page = await signIn(agent, '', authorizeQuery(t.codeClient));
    expect(page.status).toBe(302);
    const callback = new URL(page.headers.location!);
    expect(callback.searchParams.get('code')).toBeTruthy();
    expect(callback.searchParams.get('state')).toBe('xyz-123');
  });

  it('asks again when the request wants a scope the user has not approved', async () => {
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read' } });
    const page = await signIn(request.agent(t.app), '', authorizeQuery(t.codeClient, { scope: 'envelopes:read envelopes:sign' }));
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');
  });

  it.each(['consent', 'login consent', 'consent login', 'select_account consent'])('asks again when the client sends prompt=%s (consent among its space-delimited values)', async (prompt) => {
    await obtainCode(t.app, t.codeClient);
    const page = await signIn(request.agent(t.app), '', authorizeQuery(t.codeClient, { prompt }));
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');
  });

  it('always asks when rememberConsent is false', async () => {
    const always = await createTestApp({ rememberConsent: false });
    await obtainCode(always.app, always.codeClient);
    const page = await signIn(request.agent(always.app), '', authorizeQuery(always.codeClient));
    expect(page.status).toBe(200);
  });

  it('does not remember a denial', async () => {
    await authorize(t.app, t.codeClient, { decision: 'deny' });
    const page = await signIn(request.agent(t.app), '', authorizeQuery(t.codeClient));
    expect(page.status).toBe(200);
  });

  it('a code issued on a remembered consent leaves the consent as the user gave it: a narrower request narrows nothing', async () => {
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read envelopes:sign' } });
    const given = await t.store.consents!.findConsent(USER.id, t.codeClient.clientId);
    const agent = request.agent(t.app);
    const narrower = await signIn(agent, '', authorizeQuery(t.codeClient, { scope: 'envelopes:read' }));
    expect(new URL(narrower.headers.location!).searchParams.get('code')).toBeTruthy();
    // Still what was allowed, and when: the "Allowed on" date is the approval's, not the last use's.
    expect(await t.store.consents!.findConsent(USER.id, t.codeClient.clientId)).toEqual(given);
    // So the wider request is still covered, without a page (prompt=none would otherwise get consent_required).
    const wider = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { scope: 'envelopes:read envelopes:sign', prompt: 'none' })}`);
    expect(wider.status).toBe(302);
    expect(new URL(wider.headers.location!).searchParams.get('code')).toBeTruthy();
  });

  it('an Allow adds what the page asked for to what the user had approved before: an earlier scope is not asked again', async () => {
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read' } });
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:sign' } });
    expect((await t.store.consents!.findConsent(USER.id, t.codeClient.clientId))!.scope).toEqual(['envelopes:read', 'envelopes:sign']);
    const agent = request.agent(t.app);
    expect((await signIn(agent, '', authorizeQuery(t.codeClient, { scope: 'envelopes:read' }))).status).toBe(302);
    for (const scope of ['envelopes:sign', 'envelopes:read envelopes:sign']) {
      const silent = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { scope, prompt: 'none' })}`);
      expect(new URL(silent.headers.location!).searchParams.get('code')).toBeTruthy();
    }
  });

  it('an Allow of a narrower request on a page the client asked for (prompt=consent) keeps the wider consent', async () => {
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read envelopes:sign' } });
    const code = await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read', prompt: 'consent' } });
    // The code carries what this request asked for, and nothing more.
    const narrow = (await exchange(t, code)).body.access_token as string;
    expect((await request(t.app).get('/api/v1/sign').set('Authorization', `Bearer ${narrow}`)).status).toBe(403);
    expect((await t.store.consents!.findConsent(USER.id, t.codeClient.clientId))!.scope).toEqual(['envelopes:read', 'envelopes:sign']);
  });

  it('an Allow keeps no scope the integration may no longer be granted', async () => {
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read envelopes:sign' } });
    await t.store.clients.updateClient!(t.codeClient.clientId, { allowedScopes: ['envelopes:read'] });
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read', prompt: 'consent' } });
    expect((await t.store.consents!.findConsent(USER.id, t.codeClient.clientId))!.scope).toEqual(['envelopes:read']);
  });

  it('an Allow does not bring back a consent withdrawn while its page was open', async () => {
    await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read' } });
    const agent = request.agent(t.app);
    const page = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { scope: 'envelopes:sign' }));
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    await withdrawConsent(t.store, USER.id, t.codeClient.clientId);
    const decided = await agent.post('/oauth2/consent').type('form')
      .send({ csrf_token: hiddenField(page, 'csrf_token'), request_id: hiddenField(page, 'request_id'), decision: 'allow' });
    expect(decided.status).toBe(303);
    expect((await t.store.consents!.findConsent(USER.id, t.codeClient.clientId))!.scope).toEqual(['envelopes:sign']);
  });

  it('an all-access Allow, or one beside an all-access consent, remembers all-access', async () => {
    const open = await createTestApp({ scopes: { 'envelopes:read': 'Read your envelopes' } });
    const { client, clientSecret } = await registerClient(open.store, {
      name: 'No scopes', flow: 'authorization_code', redirectUris: [REDIRECT_URI], allowedScopes: [],
    });
    const integration = { clientId: client.clientId, clientSecret };
    await obtainCode(open.app, integration);
    expect((await open.store.consents!.findConsent(USER.id, client.clientId))!.scope).toEqual([]);
    await obtainCode(open.app, integration, { query: { scope: 'envelopes:read', prompt: 'consent' } });
    expect((await open.store.consents!.findConsent(USER.id, client.clientId))!.scope).toEqual([]);
  });

  it('a consent withdrawn while a remembered request is issuing its code stays withdrawn, and that code is void', async () => {
    await obtainCode(t.app, t.codeClient);
    const agent = request.agent(t.app);
    expect((await signIn(agent, '', authorizeQuery(t.codeClient))).status).toBe(302);
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    // The user withdraws (on the connected-applications page, say) while the next silent request saves its code.
    const saveCode = t.store.codes.saveCode.bind(t.store.codes);
    t.store.codes.saveCode = async (record) => {
      await saveCode(record);
      await withdrawConsent(t.store, USER.id, t.codeClient.clientId);
    };
    const res = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    const code = new URL(res.headers.location!).searchParams.get('code')!;
    expect(await t.store.consents!.findConsent(USER.id, t.codeClient.clientId)).toBeNull();
    expect((await exchange(t, code)).body.error).toBe('invalid_grant');
  });
});

describe('withdrawing consent', () => {
  let t: TestApp;
  beforeEach(async () => { t = await createTestApp(); });

  it('withdrawConsent() revokes the integration\'s tokens for the user and asks again next time', async () => {
    const tokens = (await exchange(t, await obtainCode(t.app, t.codeClient))).body;
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    await withdrawConsent(t.store, USER.id, t.codeClient.clientId);
    expect((await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${tokens.access_token}`)).status).toBe(401);
    const refreshed = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refreshed.body.error).toBe('invalid_grant');
    const page = await signIn(request.agent(t.app), '', authorizeQuery(t.codeClient));
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');
  });

  it('the connected-applications page lists the integration and its Withdraw button revokes its tokens', async () => {
    const tokens = (await exchange(t, await obtainCode(t.app, t.codeClient))).body;
    const agent = request.agent(t.app);
    const login = await agent.get('/oauth2/consents');
    expect(login.status).toBe(200);
    expect(login.text).toContain('name="password"');
    const posted = await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.location).toBe('/oauth2/consents');
    const page = await agent.get('/oauth2/consents');
    expect(page.text).toContain('Acme CRM');
    expect(page.text).toContain('Withdraw access');
    const forged = await agent.post('/oauth2/consents/withdraw').type('form').send({ csrf_token: 'forged', client_id: t.codeClient.clientId });
    expect(forged.status).toBe(403);
    expect((await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${tokens.access_token}`)).status).toBe(200);
    const withdrawn = await agent.post('/oauth2/consents/withdraw').type('form')
      .send({ csrf_token: hiddenField(page.text, 'csrf_token'), client_id: t.codeClient.clientId });
    expect(withdrawn.status).toBe(303);
    expect((await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${tokens.access_token}`)).status).toBe(401);
    const after = await agent.get('/oauth2/consents');
    expect(after.text).toContain('No application has access');
    expect(after.text).toContain('<p role="status"><bdi>Acme CRM</bdi> no longer has access to your account.</p>');
    const reloaded = await agent.get('/oauth2/consents');
    expect(reloaded.text).not.toContain('Acme CRM');
    expect(reloaded.text).not.toContain('role="status"');
  });

  it('the withdrawal notice sets a right-to-left name in <bdi>, so its trailing "!" stays with it, not with the sentence', async () => {
    // Without an isolate, "!" between the Arabic name and " no longer" takes the sentence's direction and shows on the
    // name's right, the wrong end for a right-to-left reader (Unicode bidi rule N1).
    const { client } = await registerClient(t.store, { name: 'تطبيق التوقيع!', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const agent = request.agent(t.app);
    await signInAndGetConsent(agent, '', authorizeQuery({ clientId: client.clientId, clientSecret: '' }));
    const page = await agent.get('/oauth2/consents');
    const withdrawn = await agent.post('/oauth2/consents/withdraw').type('form')
      .send({ csrf_token: hiddenField(page.text, 'csrf_token'), client_id: client.clientId });
    expect(withdrawn.status).toBe(303);
    const after = await agent.get('/oauth2/consents');
    expect(after.text).toContain('<p role="status"><bdi>تطبيق التوقيع!</bdi> no longer has access to your account.</p>');
  });

  it('leaves the tokens of other integrations alone', async () => {
    const { client, clientSecret } = await registerClient(t.store, { name: 'Other', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const other = { clientId: client.clientId, clientSecret };
    const otherCode = await obtainCode(t.app, other);
    const otherTokens = (await request(t.app).post('/oauth2/token').set('Authorization', basic(other)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code: otherCode })).body;
    await exchange(t, await obtainCode(t.app, t.codeClient));
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    await withdrawConsent(t.store, USER.id, t.codeClient.clientId);
    expect((await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${otherTokens.access_token}`)).status).toBe(200);
  });
});

describe('the host app\'s own login (currentUser and loginUrl)', () => {
  async function createHostApp() {
    const store = createMemoryStore();
    const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const userAuth = hostSessionUserAuth();
    const app = express();
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
    app.post('/account/login', express.urlencoded({ extended: false }), (req, res) => {
      (req.session as unknown as { hostUser?: string }).hostUser = 'host-42';
      const returnTo = String(req.query.return_to ?? '/');
      res.redirect(303, returnTo.startsWith('/') && !returnTo.startsWith('//') ? returnTo : '/');
    });
    const oauth = createOAuthRouter(store, userAuth, { issuer: 'http://auth.test', logger: { warn() {}, error() {} } });
    app.use(oauth.router);
    app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
    return { app, client: { clientId: client.clientId, clientSecret } };
  }

  it('sends a signed-out browser to the host login and resumes the authorization request after it', async () => {
    const { app, client } = await createHostApp();
    const agent = request.agent(app);
    const start = await agent.get(`/oauth2/authorize?${authorizeQuery(client)}`);
    expect(start.status).toBe(303);
    const loginUrl = new URL(start.headers.location!, 'http://auth.test');
    expect(loginUrl.pathname).toBe('/account/login');
    const back = await agent.post(`${loginUrl.pathname}${loginUrl.search}`).type('form').send({});
    expect(back.headers.location).toMatch(/^\/oauth2\/authorize\?/);
    const consent = await agent.get(back.headers.location!);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Host user host-42');
    const decided = await agent.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'), decision: 'allow',
    });
    const code = new URL(decided.headers.location!).searchParams.get('code')!;
    const token = await request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    const me = await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token.body.access_token}`);
    expect(me.body.userId).toBe('host-42');
  });

  it('uses the host app\'s express-session instead of mounting its own, and stores nothing in it while signed out', async () => {
    const { app, client } = await createHostApp();
    const agent = request.agent(app);
    const cookiesOf = (res: request.Response) => ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    const start = await agent.get(`/oauth2/authorize?${authorizeQuery(client)}`);
    expect(cookiesOf(start).some((c) => /^(oauth|connect)\.sid=/.test(c))).toBe(false);
    const login = new URL(start.headers.location!, 'http://auth.test');
    const back = await agent.post(`${login.pathname}${login.search}`).type('form').send({});
    expect(cookiesOf(back).some((c) => c.startsWith('connect.sid='))).toBe(true);
    const consent = await agent.get(back.headers.location!);
    expect(consent.text).toContain('name="decision"');
    expect(cookiesOf(consent).some((c) => c.startsWith('oauth.sid='))).toBe(false);
  });
});

describe('page content and branding', () => {
  it('names the requested scopes in plain words from the scopes option', async () => {
    const t = await createTestApp({ scopes: { 'envelopes:read': 'Read your envelopes', 'envelopes:sign': 'Sign envelopes on your behalf' } });
    const page = await signIn(request.agent(t.app), '', authorizeQuery(t.codeClient));
    expect(page.text).toContain('<li>Read your envelopes</li>');
    expect(page.text).toContain('<li>Sign envelopes on your behalf</li>');
  });

  it('shows the host product name and brand colour', async () => {
    const t = await createTestApp({ productName: 'Acme Sign', brandColor: '#aa3300' });
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(page.text).toContain('<header>Acme Sign</header>');
    expect(page.text).toContain('--brand:#aa3300');
  });

  it('loads no external asset: one inline stylesheet allowed by a nonce, no script', async () => {
    const t = await createTestApp();
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(page.text).not.toMatch(/<script|<link|src="http/);
    const nonce = /<style nonce="([^"]+)"/.exec(page.text)![1];
    expect(page.headers['content-security-policy']).toContain(`style-src 'nonce-${nonce}'`);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('labels every input and sets the viewport for phones', async () => {
    const t = await createTestApp();
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(page.text).toContain('<label for="username">');
    expect(page.text).toContain('<label for="password">');
    expect(page.text).toContain('name="viewport" content="width=device-width, initial-scale=1"');
    expect(page.text).toContain('<html lang="en">');
  });
});

describe('withdrawal reaches codes not yet redeemed', () => {
  it('refuses a code issued before the consent was withdrawn (invalid_grant)', async () => {
    const t = await createTestApp();
    const code = await obtainCode(t.app, t.codeClient);
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    await withdrawConsent(t.store, USER.id, t.codeClient.clientId);
    const res = await exchange(t, code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it('refuses a code issued before the withdrawal even after the user consented again (invalid_grant)', async () => {
    const t = await createTestApp();
    const before = await obtainCode(t.app, t.codeClient);
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    await withdrawConsent(t.store, USER.id, t.codeClient.clientId);
    await waitForClockToPass(Date.now());
    const after = await obtainCode(t.app, t.codeClient);
    const res = await exchange(t, before);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect((await exchange(t, after)).status).toBe(200);
  });

  it('refuses a token whose request began before the withdrawal and saves after it: no second pass needed', async () => {
    const t = await createTestApp();
    const tokens = (await exchange(t, await obtainCode(t.app, t.codeClient))).body;
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    const { hashToken } = await import('../../src/crypto/hash-token.js');
    const record = (await t.store.tokens.findAccessToken(hashToken(tokens.access_token)))!;
    const requestStarted = new Date();
    await withdrawConsent(t.store, USER.id, t.codeClient.clientId);
    const late = { ...record, tokenHash: hashToken('late-token'), grantId: 'late-grant' };
    expect(await t.store.tokens.saveTokens(late, null, { authorizedAt: requestStarted })).toBe(false);
    expect(await t.store.tokens.findAccessToken(late.tokenHash)).toBeNull();
    expect(await t.store.tokens.findAccessToken(record.tokenHash)).toBeNull();
  });
});

/** Resolves once Date.now() is past `ms`, so a later moment is strictly later at millisecond precision. */
async function waitForClockToPass(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((resolve) => setImmediate(resolve));
}

describe('a consent page left open past the ten minutes a pending request lives (WCAG 2.2.1)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is shown afresh, every check run again, rather than refused; its answer then counts once', async () => {
    const t = await createTestApp();
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'slow-reader' }));
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 11 * 60 * 1000);
    const form = { csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'), decision: 'allow' };
    const late = await agent.post('/oauth2/consent').type('form').send(form);
    expect(late.status).toBe(303);
    expect(late.headers.location).toMatch(/^\/oauth2\/authorize\?/);
    expect(new URL(late.headers.location!, 'http://x').searchParams.get('state')).toBe('slow-reader');
    const again = await agent.get(late.headers.location!);
    expect(again.status).toBe(200);
    expect(hiddenField(again.text, 'request_id')).not.toBe(form.request_id);
    const allowed = await agent.post('/oauth2/consent').type('form')
      .send({ ...form, csrf_token: hiddenField(again.text, 'csrf_token'), request_id: hiddenField(again.text, 'request_id') });
    expect(allowed.status).toBe(303);
    expect(new URL(allowed.headers.location!).searchParams.get('code')).toBeTruthy();
    // The old form is spent: sent again, it is refused, not restarted.
    expect((await agent.post('/oauth2/consent').type('form').send(form)).status).toBe(400);
  });
});

describe('the sign-in page\'s Cancel (RFC 6749 §4.1.2.1)', () => {
  it('sends the integration access_denied with the state and iss, without a password, and signs nobody in', async () => {
    const t = await createTestApp();
    const agent = request.agent(t.app);
    const page = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state: 'not-today' })}`);
    expect(page.text).toMatch(/<button type="submit" name="cancel" value="1" class="secondary" formnovalidate>Cancel<\/button>/);
    const cancelled = await agent.post('/oauth2/login').type('form')
      .send({ csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), cancel: '1' });
    const callback = expectRedirectTo(cancelled);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('error_description')).toBe('the user cancelled the sign-in');
    expect(callback.searchParams.get('state')).toBe('not-today');
    expect(callback.searchParams.get('iss')).toBe(ISSUER);
    expect(callback.searchParams.has('code')).toBe(false);
    // Still signed out: the same request shows the sign-in page again.
    expect((await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`)).text).toContain('name="password"');
  });

  it('is refused like any sign-in without its CSRF token, and is not offered for the connected-applications page', async () => {
    const t = await createTestApp();
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    const forged = await request(t.app).post('/oauth2/login').type('form')
      .send({ csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), cancel: '1' });
    expect(forged.status).toBe(403);
    expect(forged.headers.location).toBeUndefined();
    const consents = await request(t.app).get('/oauth2/consents');
    expect(consents.text).toContain('name="password"');
    expect(consents.text).not.toContain('name="cancel"');
  });
});

/**
 * A signed-in browser at a consent page whose code save waits at a gate: `atSave` resolves when an Allow reaches it,
 * `release` lets it go on; `granted` collects the consent.granted events.
 */
async function atConsentWithGatedCodeSave(state: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  let reachedSave!: () => void;
  const atSave = new Promise<void>((resolve) => { reachedSave = resolve; });
  const memory = createMemoryStore();
  const store = { ...memory, codes: { ...memory.codes, saveCode: async (record: Parameters<typeof memory.codes.saveCode>[0]) => {
    reachedSave();
    await gate;
    return memory.codes.saveCode(record);
  } } };
  const events = new OAuthEvents();
  const granted: unknown[] = [];
  events.on('event', (event: { type: string }) => { if (event.type === 'consent.granted') granted.push(event); });
  const t = await createTestApp({ events }, store);
  const agent = request.agent(t.app);
  const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state }));
  const form = consentFields(consent);
  return { agent, form, atSave, release, granted };
}

describe('a form whose session or CSRF cookie ended while it was open (WCAG 2.2.1)', () => {
  it('consent: with the session gone, Allow is sent back to the authorization request, which asks for sign-in again, not refused', async () => {
    const t = await createTestApp();
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'idle-reader' }));
    const form = {
      csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'),
      resume: hiddenField(consent, 'resume'), decision: 'allow',
    };
    // A fresh browser: no session cookie, as after the idle timeout.
    const late = await request(t.app).post('/oauth2/consent').type('form').send(form);
    expect(late.status).toBe(303);
    const again = new URL(late.headers.location!, 'http://x');
    expect(again.pathname).toBe('/oauth2/authorize');
    expect(again.searchParams.get('state')).toBe('idle-reader');
    expect(again.searchParams.get('client_id')).toBe(t.codeClient.clientId);
    const login = await request(t.app).get(late.headers.location!);
    expect(login.status).toBe(200);
    expect(login.text).toContain('name="password"');
  });

  it('consent: with the session gone, a Deny sends nothing to the integration and asks for no sign-in: the notice at once, and its Deny is the access_denied', async () => {
    const t = await createTestApp();
    const consent = await signInAndGetConsent(request.agent(t.app), '', authorizeQuery(t.codeClient, { state: 'gone-reader' }));
    const form = {
      csrf_token: hiddenField(consent, 'csrf_token'), request_id: hiddenField(consent, 'request_id'),
      resume: hiddenField(consent, 'resume'), decision: 'deny',
    };
    // A fresh browser: no session cookie, as after the idle timeout.
    const browser = request.agent(t.app);
    const denied = await browser.post('/oauth2/consent').type('form').send(form);
    expect(denied.status).toBe(403);
    expect(denied.headers.location).toBeUndefined();
    expect(denied.text).toContain('<p class="error" role="alert">This page had expired, so nothing was sent to <bdi>Acme CRM</bdi>. '
      + 'Press Deny again to refuse; no sign-in is needed.</p>');
    expect(denied.text).toContain('<title>Error: Allow \u2068Acme CRM\u2069? – ');
    expect(denied.text).not.toContain('name="password"');
    expect(denied.text).toContain('<button type="submit" name="cancel" value="deny" class="secondary">Deny</button>');
    // Its Deny (the sign-in form's Cancel, with the login cookie's token) is the access_denied, with the state, and
    // says what the user did, as the consent page's Deny does: not a sign-in they cancelled.
    const refused = expectRedirectTo(await browser.post('/oauth2/login').type('form')
      .send({ csrf_token: hiddenField(denied.text, 'csrf_token'), request_id: hiddenField(denied.text, 'request_id'), cancel: 'deny' }));
    expect(refused.searchParams.get('error')).toBe('access_denied');
    expect(refused.searchParams.get('error_description')).toBe('the user denied the request');
    expect(refused.searchParams.get('state')).toBe('gone-reader');
    expect(refused.searchParams.get('iss')).toBe(ISSUER);
    // Without that cookie (a forged POST that lands on the page cannot read it) the Deny is not taken.
    const forged = await request(t.app).post('/oauth2/login').type('form')
      .send({ csrf_token: hiddenField(denied.text, 'csrf_token'), request_id: hiddenField(denied.text, 'request_id'), cancel: '1' });
    expect(forged.headers.location ?? '').not.toContain('access_denied');
  });

  it('consent, host login only: with the session gone, a Deny gets the notice at once, never the host\'s login (which has no Cancel); an Allow still goes through that login', async () => {
    const store = createMemoryStore();
    const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const app = express();
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
    app.post('/account/login', (req, res) => {
      (req.session as unknown as { hostUser?: string }).hostUser = 'host-42';
      res.redirect(303, String(req.query.return_to));
    });
    app.use(createOAuthRouter(store, hostSessionUserAuth(), { issuer: ISSUER, logger: { warn() {}, error() {} } }).router);
    const query = authorizeQuery({ clientId: client.clientId, clientSecret }, { state: 'host-gone' });
    const reader = request.agent(app);
    const login = new URL((await reader.get(`/oauth2/authorize?${query}`)).headers.location!, ISSUER);
    const back = await reader.post(`${login.pathname}${login.search}`);
    const consent = (await reader.get(back.headers.location!)).text;
    expect(consent).toContain('name="decision"');
    // The host's session ended (a fresh browser holds none): the router's data in it went with it.
    const browser = request.agent(app);
    const denied = await browser.post('/oauth2/consent').type('form').send({ ...consentFields(consent), decision: 'deny' });
    expect(denied.status).toBe(403);
    expect(denied.headers.location).toBeUndefined();
    expect(denied.text).toContain('This page had expired, so nothing was sent to <bdi>Acme CRM</bdi>. Press Deny again to refuse');
    const refused = expectRedirectTo(await browser.post('/oauth2/login').type('form')
      .send({ csrf_token: hiddenField(denied.text, 'csrf_token'), request_id: hiddenField(denied.text, 'request_id'), cancel: '1' }));
    expect(refused.searchParams.get('error')).toBe('access_denied');
    expect(refused.searchParams.get('state')).toBe('host-gone');
    expect(refused.searchParams.has('code')).toBe(false);
    // An Allow needs the user: back to the authorization request, whose answer is the host's login, as before.
    const allowed = await request(app).post('/oauth2/consent').type('form').send({ ...consentFields(consent), decision: 'allow' });
    expect(allowed.status).toBe(303);
    expect(new URL(allowed.headers.location!, ISSUER).pathname).toBe('/oauth2/authorize');
    const toLogin = await request(app).get(allowed.headers.location!);
    expect(toLogin.status).toBe(303);
    expect(new URL(toLogin.headers.location!, ISSUER).pathname).toBe('/account/login');
  });

  it('consent: a form answered under a session since replaced never becomes a code nor an access_denied: Deny and Allow ask for consent again', async () => {
    const t = await createTestApp();
    const old = await signInAndGetConsent(request.agent(t.app), '', authorizeQuery(t.codeClient, { state: 'tab-a' }));
    const form = { csrf_token: hiddenField(old, 'csrf_token'), request_id: hiddenField(old, 'request_id'), resume: hiddenField(old, 'resume') };
    // Another tab signs in afresh and allows the same integration, which remembers that consent.
    const browser = request.agent(t.app);
    const fresh = await signInAndGetConsent(browser, '', authorizeQuery(t.codeClient, { state: 'tab-b' }));
    const allowed = await browser.post('/oauth2/consent').type('form')
      .send({ csrf_token: hiddenField(fresh, 'csrf_token'), request_id: hiddenField(fresh, 'request_id'), decision: 'allow' });
    expect(expectRedirectTo(allowed).searchParams.get('code')).toBeTruthy();
    // The first tab's Deny: neither a code of the session now signed in nor an access_denied its token cannot vouch for.
    const denied = await browser.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' });
    expect(denied.status).toBe(303);
    expect(new URL(denied.headers.location!, 'http://x').pathname).toBe('/oauth2/authorize');
    expect(new URL(denied.headers.location!, 'http://x').searchParams.has('code')).toBe(false);
    // Its Allow: the consent page again, naming who is signed in now, though a consent is remembered.
    const restarted = await browser.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' });
    expect(restarted.status).toBe(303);
    const again = new URL(restarted.headers.location!, 'http://x');
    expect(again.searchParams.get('prompt')).toBe('consent');
    expect(again.searchParams.get('state')).toBe('tab-a');
    const page = await browser.get(restarted.headers.location!);
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="decision"');
  });

  it('consent: a second Allow of a request already answered (its first answer lost) asks again instead of a dead end', async () => {
    const t = await createTestApp();
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'double-tap' }));
    const form = consentFields(consent);
    expect(expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' })).searchParams.get('code')).toBeTruthy();
    const second = await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' });
    expect(second.status).toBe(303);
    // Asked again, though the consent just given is remembered: a stale form's click is not taken as given.
    expect(new URL(second.headers.location!, 'http://x').searchParams.get('prompt')).toBe('consent');
    const again = await agent.get(second.headers.location!);
    expect(again.status).toBe(200);
    expect(again.text).toContain('name="decision"');
    const completed = expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(again.text, 'csrf_token'), request_id: hiddenField(again.text, 'request_id'), decision: 'allow',
    }));
    expect(completed.searchParams.get('code')).toBeTruthy();
    expect(completed.searchParams.get('state')).toBe('double-tap');
  });

  it('consent: a Deny of a request this session allowed (Back, another tab) is not sent as access_denied: a 409 page says where access is withdrawn (RFC 6749 §10.12)', async () => {
    const t = await createTestApp();
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'tap' }));
    const form = consentFields(consent);
    const allowed = expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' }));
    expect(allowed.searchParams.get('code')).toBeTruthy();
    const denied = await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' });
    // The integration holds a code for state "tap": an access_denied for the same state would contradict it.
    expect(denied.status).toBe(409);
    expect(denied.headers.location).toBeUndefined();
    expect(denied.text).toContain('You already allowed this request');
    expect(denied.text).toContain('the page that lists the applications you allowed');
    expect(denied.headers['cache-control']).toBe('no-store');
    // What the page says stands: the code works, and the consent is remembered.
    expect((await exchange(t, allowed.searchParams.get('code')!)).status).toBe(200);
    const later = expectRedirectTo(await agent.get('/oauth2/authorize').query(authorizeQuery(t.codeClient, { state: 'later' })));
    expect(later.searchParams.get('code')).toBeTruthy();
  });

  it('consent: a Deny sent again after a Deny, or for a request never answered (dropped for newer ones), still reaches the integration as access_denied', async () => {
    const t = await createTestApp({ rememberConsent: false });
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'first' }));
    const form = consentFields(consent);
    for (let i = 0; i < 2; i += 1) {
      const denied = expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' }));
      expect(denied.searchParams.get('error')).toBe('access_denied');
      expect(denied.searchParams.get('state')).toBe('first');
    }
    // Ten newer requests drop the oldest pending one: its Deny was never decided, so it is sent as access_denied.
    const oldest = await agent.get('/oauth2/authorize').query(authorizeQuery(t.codeClient, { state: 'dropped' }));
    const dropped = { csrf_token: hiddenField(oldest.text, 'csrf_token'), request_id: hiddenField(oldest.text, 'request_id'), resume: hiddenField(oldest.text, 'resume') };
    for (let i = 0; i < 10; i += 1) expect((await agent.get('/oauth2/authorize').query(authorizeQuery(t.codeClient, { state: `newer-${i}` }))).status).toBe(200);
    const late = expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({ ...dropped, decision: 'deny' }));
    expect(late.searchParams.get('error')).toBe('access_denied');
    expect(late.searchParams.get('state')).toBe('dropped');
  });

  it('consent: Allow and then Deny of one request, the second sent while the first is answered, get one answer: one code, one consent', async () => {
    // The code's save waits until the Deny has loaded the session (so both found the request pending), or has come back.
    const { agent, form, atSave, release, granted } = await atConsentWithGatedCodeSave('two-taps');
    const allow = agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' }).then((res) => res);
    await atSave;
    const deny = agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' }).then((res) => res);
    // Answered at once without the fix; waited for with it (the fallback only bounds the test).
    await Promise.race([deny, new Promise((resolve) => setTimeout(resolve, 300))]);
    release();
    const [allowed, denied] = await Promise.all([allow, deny]);
    const callback = expectRedirectTo(allowed);
    expect(callback.searchParams.get('code')).toBeTruthy();
    expect(denied.status).toBe(303);
    expect(denied.headers.location).toBe(allowed.headers.location);
    expect(granted).toHaveLength(1);
    // Answered once for good: the waiting POST's copy of the session did not bring the request back.
    const third = await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' });
    expect(third.status).toBe(303);
    expect(granted).toHaveLength(1);
    // Nor did it lose the mark of the Allow, saved after the first's: a Deny now is the 409 page, not access_denied.
    const fourth = await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' });
    expect(fourth.status).toBe(409);
  });

  it('consent: an Allow and a Deny whose sessions the store hands back together (one Redis reply carrying both) get one answer', async () => {
    // A session store that answers reads in pairs, both in one go, as node-redis resolves the replies of one socket read.
    const sessions = new MemorySessionStore();
    const t = await createTestApp({ session: { secret: 'test-session-secret-0123456789', store: sessions } });
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'one-reply' }));
    const form = consentFields(consent);
    const get = sessions.get.bind(sessions);
    const held: (() => void)[] = [];
    sessions.get = (sid, callback) => {
      held.push(() => get(sid, callback));
      if (held.length === 2) for (const read of held.splice(0)) read();
    };
    const post = (decision: string) => agent.post('/oauth2/consent').type('form').send({ ...form, decision }).then((res) => res);
    const [allowed, denied] = await Promise.all([post('allow'), post('deny')]);
    const codes = [allowed, denied].map((res) => new URL(res.headers.location!, 'http://x').searchParams.get('code'));
    expect(new Set(codes.filter((code) => code !== null)).size).toBe(1);
    expect(denied.headers.location).toBe(allowed.headers.location);
  });

  it('consent: a Deny arriving while the Allow\'s answered mark is being saved gets the Allow\'s answer, never an access_denied beside its code', async () => {
    // A session store whose write of the session carrying the mark is held back until released.
    class HeldMarkStore extends session.MemoryStore {
      held: Promise<void> | null = null;
      reached: (() => void) | null = null;
      override set(sid: string, data: session.SessionData, done?: (err?: unknown) => void): void {
        if (this.held && JSON.stringify(data).includes('"answered"')) {
          this.reached?.();
          void this.held.then(() => super.set(sid, data, done));
          return;
        }
        super.set(sid, data, done);
      }
    }
    const sessions = new HeldMarkStore();
    const t = await createTestApp({ session: { secret: 'test-session-secret-0123456789', store: sessions } });
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'window' }));
    const form = consentFields(consent);
    let release!: () => void;
    sessions.held = new Promise((resolve) => { release = resolve; });
    const atMarkSave = new Promise<void>((resolve) => { sessions.reached = resolve; });
    const allow = agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' }).then((res) => res);
    await atMarkSave;
    const deny = agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' }).then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const [allowed, denied] = await Promise.all([allow, deny]);
    expect(expectRedirectTo(allowed).searchParams.get('code')).toBeTruthy();
    if (denied.status === 303) expect(denied.headers.location).toBe(allowed.headers.location);
    else expect(denied.status).toBe(409);
  });

  it('consent: an Allow that issued nothing (the store out) is not marked allowed: a Deny afterwards still reaches the integration', async () => {
    const memory = createMemoryStore();
    let out = true;
    const store = { ...memory, codes: { ...memory.codes, saveCode: async (record: Parameters<typeof memory.codes.saveCode>[0]) => {
      if (out) throw new StoreUnavailableError('codes out for the test');
      return memory.codes.saveCode(record);
    } } };
    const t = await createTestApp({ logger: { warn() {}, error() {} } }, store);
    const agent = request.agent(t.app);
    const consent = await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient, { state: 'outage' }));
    const form = consentFields(consent);
    const failed = expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' }));
    expect(failed.searchParams.get('error')).toBe('temporarily_unavailable');
    out = false;
    const denied = expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' }));
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('outage');
  });

  it('consent: Allow whose connection the browser dropped (a second tap cancels the first), then Deny: the Deny gets the Allow\'s answer', async () => {
    const { agent, form, atSave, release, granted } = await atConsentWithGatedCodeSave('dropped');
    const allow = agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' });
    allow.then(() => undefined, () => undefined);
    await atSave;
    allow.abort();
    const deny = agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'deny' }).then((res) => res);
    await Promise.race([deny, new Promise((resolve) => setTimeout(resolve, 300))]);
    release();
    const denied = expectRedirectTo(await deny);
    expect(denied.searchParams.get('code')).toBeTruthy();
    expect(denied.searchParams.get('state')).toBe('dropped');
    expect(granted).toHaveLength(1);
  });

  it('consent: a form without a valid resume, or for an integration since disabled, gets the error page and no redirect', async () => {
    const t = await createTestApp();
    const consent = await signInAndGetConsent(request.agent(t.app), '', authorizeQuery(t.codeClient));
    const form = { csrf_token: 'x', request_id: hiddenField(consent, 'request_id'), decision: 'allow' };
    for (const resume of ['', 'not base64!', Buffer.from('response_type=code&client_id=nobody').toString('base64url')]) {
      const refused = await request(t.app).post('/oauth2/consent').type('form').send({ ...form, resume });
      expect(refused.status).toBe(403);
      expect(refused.headers.location).toBeUndefined();
    }
    await t.store.clients.updateClient!(t.codeClient.clientId, { disabled: true });
    const disabled = await request(t.app).post('/oauth2/consent').type('form').send({ ...form, resume: hiddenField(consent, 'resume') });
    expect(disabled.status).toBe(403);
    expect(disabled.headers.location).toBeUndefined();
  });

  it('login: a form whose CSRF cookie is gone is shown again with a valid token and nothing typed kept; that form signs in', async () => {
    const t = await createTestApp();
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    const form = { csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: USER.username, password: USER.password };
    const agent = request.agent(t.app);
    const stale = await agent.post('/oauth2/login').type('form').send(form);
    expect(stale.status).toBe(403);
    expect(stale.text).toContain('This sign-in form had expired, so you were not signed in. Please sign in again.');
    expect(stale.text).not.toContain(USER.username);
    // Nothing typed was wrong: the fields are described by the message, not marked invalid (an empty field announced
    // as "invalid entry").
    expect(stale.text).toContain('aria-describedby="login-error"');
    expect(stale.text).not.toContain('aria-invalid');
    expect(hiddenField(stale.text, 'request_id')).toBe(form.request_id);
    const signedIn = await agent.post('/oauth2/login').type('form').send({ ...form, csrf_token: hiddenField(stale.text, 'csrf_token') });
    expect(signedIn.status).toBe(303);
  });
});

describe('a click on an expired consent page says it was not taken, and takes nothing (WCAG 3.3.1, RFC 6749 §10.12)', () => {
  const NOTICE = '<p class="error" role="alert">This page had expired, so nothing was sent to <bdi>Acme CRM</bdi>. Choose again.</p>';

  /** A consent app whose consent.granted events are collected. */
  async function appWithEvents(options: Parameters<typeof createTestApp>[0] = {}) {
    const events = new OAuthEvents();
    const granted: unknown[] = [];
    events.on('event', (event: { type: string }) => { if (event.type === 'consent.granted') granted.push(event); });
    return { t: await createTestApp({ events, ...options }), granted };
  }

  /** The page without what changes per response (nonce, CSRF token, request id). */
  const stable = (html: string): string => html.replace(/nonce="[^"]*"/, '')
    .replace(/name="csrf_token" value="[^"]*"/, '').replace(/name="request_id" value="[^"]*"/, '');

  it('an Allow whose session was replaced: the consent page again, with the notice as an alert and "Error: " in its title; nothing recorded, no code; a fresh Allow there works', async () => {
    const { t, granted } = await appWithEvents();
    const stale = consentFields(await signInAndGetConsent(request.agent(t.app), '', authorizeQuery(t.codeClient, { state: 'old-tab' })));
    // The same browser, signed in afresh since (another session): the old page's token no longer matches.
    const browser = request.agent(t.app);
    await signInAndGetConsent(browser, '', authorizeQuery(t.codeClient, { state: 'other' }));
    const late = await browser.post('/oauth2/consent').type('form').send({ ...stale, decision: 'allow' });
    expect(late.status).toBe(303);
    expect(new URL(late.headers.location!, 'http://x').searchParams.has('code')).toBe(false);
    const page = await browser.get(late.headers.location!);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<h1>Allow <bdi>Acme CRM</bdi>?</h1>\n${NOTICE}\n<p>`);
    expect(page.text).toContain('<title>Error: Allow \u2068Acme CRM\u2069? – ');
    // The mark is the address's, not the request's: the form does not carry it on.
    expect(Buffer.from(hiddenField(page.text, 'resume'), 'base64url').toString()).not.toContain('oauth_router_notice');
    expect(await t.store.consents!.findConsent(USER.id, t.codeClient.clientId)).toBeNull();
    expect(granted).toHaveLength(0);
    const allowed = expectRedirectTo(await browser.post('/oauth2/consent').type('form')
      .send({ ...consentFields(page.text), decision: 'allow' }));
    expect(allowed.searchParams.get('code')).toBeTruthy();
    expect(allowed.searchParams.get('state')).toBe('old-tab');
    expect(allowed.searchParams.has('oauth_router_notice')).toBe(false);
    expect(granted).toHaveLength(1);
  });

  it('an Allow whose session ended: the sign-in page, with the notice as an alert and "Error: " in its title (200)', async () => {
    const { t, granted } = await appWithEvents();
    const stale = consentFields(await signInAndGetConsent(request.agent(t.app), '', authorizeQuery(t.codeClient)));
    const fresh = request.agent(t.app);
    const late = await fresh.post('/oauth2/consent').type('form').send({ ...stale, decision: 'allow' });
    const login = await fresh.get(late.headers.location!);
    expect(login.status).toBe(200);
    expect(login.text).toContain('<p class="error" role="alert" id="login-error">This page had expired, so nothing was sent to '
      + '<bdi>Acme CRM</bdi>. Sign in to choose again.</p>');
    expect(login.text).toContain('<title>Error: Sign in – ');
    expect(login.text).not.toContain('aria-invalid');
    expect(granted).toHaveLength(0);
  });

  it('a forged POST with the victim\'s cookies but not the page\'s token gets no more than a link to the authorization request: the same page, but for the notice', async () => {
    const { t, granted } = await appWithEvents();
    const victim = request.agent(t.app);
    await signInAndGetConsent(victim, '', authorizeQuery(t.codeClient, { state: 'victim' }));
    // The attacker's own request, in a form of its making; only the CSRF token is out of its reach.
    const query = authorizeQuery(t.codeClient, { state: 'forged', prompt: 'consent' });
    const resume = Buffer.from(query).toString('base64url');
    const forged = await victim.post('/oauth2/consent').type('form')
      .send({ csrf_token: 'A'.repeat(43), request_id: 'x', resume, decision: 'allow' });
    expect(forged.status).toBe(303);
    const location = new URL(forged.headers.location!, 'http://x');
    expect(location.searchParams.has('code')).toBe(false);
    const viaForgery = await victim.get(forged.headers.location!);
    const viaLink = await victim.get(`/oauth2/authorize?${query}`);
    expect(viaForgery.status).toBe(viaLink.status);
    expect(stable(viaForgery.text).replace(`${NOTICE}\n`, '').replace('<title>Error: ', '<title>')).toBe(stable(viaLink.text));
    expect(await t.store.consents!.findConsent(USER.id, t.codeClient.clientId)).toBeNull();
    expect(granted).toHaveLength(0);
  });

  it('a Deny whose session was replaced, as an Allow: the consent page again with the notice, nothing sent to the integration; a fresh Deny there is the access_denied', async () => {
    const { t, granted } = await appWithEvents();
    const stale = consentFields(await signInAndGetConsent(request.agent(t.app), '', authorizeQuery(t.codeClient, { state: 'old-tab' })));
    const browser = request.agent(t.app);
    await signInAndGetConsent(browser, '', authorizeQuery(t.codeClient, { state: 'other' }));
    const late = await browser.post('/oauth2/consent').type('form').send({ ...stale, decision: 'deny' });
    expect(late.status).toBe(303);
    const location = new URL(late.headers.location!, 'http://x');
    expect(location.pathname).toBe('/oauth2/authorize');
    expect(location.searchParams.has('error')).toBe(false);
    const page = await browser.get(late.headers.location!);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<h1>Allow <bdi>Acme CRM</bdi>?</h1>\n${NOTICE}\n<p>`);
    expect(page.text).toContain('<title>Error: Allow \u2068Acme CRM\u2069? – ');
    const denied = expectRedirectTo(await browser.post('/oauth2/consent').type('form').send({ ...consentFields(page.text), decision: 'deny' }));
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('old-tab');
    expect(granted).toHaveLength(0);
  });

  it('a forged Deny with the victim\'s cookies but not the page\'s token gets no more than a link: nothing at the integration\'s address, the same page but for the notice', async () => {
    const { t } = await appWithEvents();
    const victim = request.agent(t.app);
    await signInAndGetConsent(victim, '', authorizeQuery(t.codeClient, { state: 'victim' }));
    const query = authorizeQuery(t.codeClient, { state: 'forged', prompt: 'consent' });
    const forged = await victim.post('/oauth2/consent').type('form')
      .send({ csrf_token: 'A'.repeat(43), request_id: 'x', resume: Buffer.from(query).toString('base64url'), decision: 'deny' });
    expect(forged.status).toBe(303);
    expect(forged.headers.location!.startsWith(REDIRECT_URI)).toBe(false);
    const viaForgery = await victim.get(forged.headers.location!);
    const viaLink = await victim.get(`/oauth2/authorize?${query}`);
    expect(viaForgery.status).toBe(viaLink.status);
    expect(stable(viaForgery.text).replace(`${NOTICE}\n`, '').replace('<title>Error: ', '<title>')).toBe(stable(viaLink.text));
  });

  it('a second Allow of a request this session answered gets no notice: its first click was sent', async () => {
    const t = await createTestApp();
    const agent = request.agent(t.app);
    const form = consentFields(await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient)));
    expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' }));
    const second = await agent.post('/oauth2/consent').type('form').send({ ...form, decision: 'allow' });
    const again = await agent.get(second.headers.location!);
    expect(again.text).toContain('name="decision"');
    expect(again.text).not.toContain('role="alert"');
    expect(again.text).toContain('<title>Allow ');
  });

  /**
   * A host app as hosts write it (README "Embedding in your app"): express-session, passport-local with a passport
   * session, whose sign-in and sign-out regenerate the session without the router's data, and the router's host login.
   */
  async function passportHost(routerSession: { hostSession: true } | undefined) {
    const users: Record<string, { id: string; password: string; name: string }> = {
      alice: { id: 'host-alice', password: 'alice-password-1', name: 'Alice Host' },
      bob: { id: 'host-bob', password: 'bob-password-1', name: 'Bob Host' },
    };
    const store = createMemoryStore();
    const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const authenticator = new passport.Passport();
    authenticator.use(new LocalStrategy((username, password, done) => {
      const user = users[username];
      done(null, user?.password === password ? { id: user.id } : false);
    }));
    authenticator.serializeUser((user, done) => done(null, (user as { id: string }).id));
    authenticator.deserializeUser((id: string, done) => done(null, { id }));
    const userAuth: UserAuth = {
      async currentUser(req) {
        const found = Object.values(users).find((user) => user.id === (req.user as { id?: string } | undefined)?.id);
        return found ? { id: found.id, displayName: found.name } : null;
      },
      loginUrl: (_req, returnTo) => `/login?return_to=${encodeURIComponent(returnTo)}`,
    };
    const app = express();
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
    app.use(authenticator.initialize(), authenticator.session());
    app.post('/login', express.urlencoded({ extended: false }), authenticator.authenticate('local', { failureRedirect: '/login' }),
      (req, res) => { const to = String(req.query.return_to ?? '/'); res.redirect(303, to.startsWith('/') && !to.startsWith('//') ? to : '/'); });
    app.post('/logout', (req, res, next) => { req.logout((err) => (err ? next(err) : res.redirect(303, '/'))); });
    app.use(createOAuthRouter(store, userAuth, { issuer: ISSUER, logger: { warn() {}, error() {} }, ...(routerSession ? { session: routerSession } : {}) }).router);
    /** Signs `username` in at the host's login, as its form does: passport regenerates the session. */
    const hostSignIn = async (agent: request.Agent, username: string, returnTo = '/') => agent
      .post(`/login?return_to=${encodeURIComponent(returnTo)}`).type('form').send({ username, password: users[username]!.password });
    return { app, hostSignIn, client: { clientId: client.clientId, clientSecret } };
  }

  it.each([['the host\'s own login', undefined], ['session.hostSession: true', { hostSession: true } as const]])(
    'a Deny whose host session was replaced by another user\'s sign-in at the host\'s login (%s): the consent page again for who is signed in now, with the notice; nothing sent, no "press Deny again"',
    async (_label, routerSession) => {
      const { app, hostSignIn, client } = await passportHost(routerSession);
      const browser = request.agent(app);
      const query = authorizeQuery(client, { state: 'alice-tab' });
      const signedIn = await hostSignIn(browser, 'alice', `/oauth2/authorize?${query}`);
      const alicePage = await browser.get(signedIn.headers.location!);
      expect(alicePage.text).toContain('Alice Host');
      const stale = consentFields(alicePage.text);
      // Bob signs in at the host's login in another tab of the same browser: a new session, without the router's data.
      expect((await hostSignIn(browser, 'bob')).status).toBe(303);
      const late = await browser.post('/oauth2/consent').type('form').send({ ...stale, decision: 'deny' });
      expect(late.status).toBe(303);
      const location = new URL(late.headers.location!, ISSUER);
      expect(location.pathname).toBe('/oauth2/authorize');
      expect(location.searchParams.get('prompt')).toBe('consent');
      expect(location.searchParams.get('oauth_router_notice')).toBe('consent_expired');
      expect(location.searchParams.has('error')).toBe(false);
      const page = await browser.get(late.headers.location!);
      expect(page.status).toBe(200);
      expect(page.text).toContain(`<h1>Allow <bdi>Acme CRM</bdi>?</h1>\n${NOTICE}\n<p>`);
      expect(page.text).toContain('Bob Host');
      expect(page.text).not.toContain('Alice Host');
      // The page Bob now sees is his to answer: its Deny is the access_denied, with the old tab's state.
      const denied = expectRedirectTo(await browser.post('/oauth2/consent').type('form').send({ ...consentFields(page.text), decision: 'deny' }));
      expect(denied.searchParams.get('error')).toBe('access_denied');
      expect(denied.searchParams.get('state')).toBe('alice-tab');
    },
  );

  it.each([['the host\'s own login', undefined], ['session.hostSession: true', { hostSession: true } as const]])(
    'a Deny whose host session ended at the host\'s sign-out (%s) still gets "press Deny again" at once, never the host\'s login',
    async (_label, routerSession) => {
      const { app, hostSignIn, client } = await passportHost(routerSession);
      const browser = request.agent(app);
      const signedIn = await hostSignIn(browser, 'alice', `/oauth2/authorize?${authorizeQuery(client, { state: 'signed-out' })}`);
      const stale = consentFields((await browser.get(signedIn.headers.location!)).text);
      expect((await browser.post('/logout')).status).toBe(303);
      const late = await browser.post('/oauth2/consent').type('form').send({ ...stale, decision: 'deny' });
      expect(late.status).toBe(403);
      expect(late.headers.location).toBeUndefined();
      expect(late.text).toContain('This page had expired, so nothing was sent to <bdi>Acme CRM</bdi>. Press Deny again to refuse; no sign-in is needed.');
      const refused = expectRedirectTo(await browser.post('/oauth2/login').type('form')
        .send({ csrf_token: hiddenField(late.text, 'csrf_token'), request_id: hiddenField(late.text, 'request_id'), cancel: '1' }));
      expect(refused.searchParams.get('error')).toBe('access_denied');
      expect(refused.searchParams.get('state')).toBe('signed-out');
    },
  );
});

describe('names on the pages', () => {
  it('an integration name with bidirectional formatting characters is refused; a right-to-left name is kept and isolated in <bdi>', async () => {
    const t = await createTestApp();
    for (const name of ['Notes \u202EppA ruoY', 'Spoof \u202Emoc.elgooG\u202C test', 'a\u2066b\u2069', 'x\u200Fy']) {
      await expect(registerClient(t.store, { name, flow: 'client_credentials' })).rejects.toThrow(/bidirectional formatting characters/);
    }
    const { client } = await registerClient(t.store, { name: 'تطبيق الملاحظات', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const page = await signIn(request.agent(t.app), '', authorizeQuery({ clientId: client.clientId, clientSecret: '' }));
    expect(page.text).toContain('<h1>Allow <bdi>تطبيق الملاحظات</bdi>?</h1>');
  });

  it('the consent page says what Deny does and where access is withdrawn later; the login page names the account to use', async () => {
    const t = await createTestApp();
    const login = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(login.text).toMatch(/Sign in with your <strong>[^<]+<\/strong> account to continue to <strong><bdi>[^<]+<\/bdi><\/strong>\./);
    const consent = await signInAndGetConsent(request.agent(t.app), '', authorizeQuery(t.codeClient));
    expect(consent).toContain('Deny shares nothing with');
    expect(consent).toContain('<a href="/oauth2/consents">Connected applications</a>');
  });
});
