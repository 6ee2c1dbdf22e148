// A consent form is the answer of the user it was shown to: posted while another is signed in on the same session
// (a host's login that does not regenerate it), it is stale, never an Allow or a Deny for whoever is signed in now.
import { afterEach, describe, expect, it, vi } from 'vitest';
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { ISSUER, REDIRECT_URI } from '../helpers/app.js';
import { expectRedirectTo } from '../helpers/spec-requests.js';
import { authorizeQuery, hiddenField } from '../helpers/browser-flow.js';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { hostSessionUserAuth } from '../helpers/host-login.js';

const NOTICE = '<p class="error" role="alert">This page had expired, so nothing was sent to <bdi>Acme CRM</bdi>. Choose again.</p>';

/** A host whose login (`POST /account/login?user=…`) writes the user into its express-session without regenerating it. */
async function keptSessionHost() {
  const store = createMemoryStore();
  const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
  const app = express();
  app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
  app.post('/account/login', (req, res) => {
    (req.session as unknown as { hostUser?: string }).hostUser = String(req.query.user);
    res.status(204).end();
  });
  app.use(createOAuthRouter(store, hostSessionUserAuth(), { issuer: ISSUER, rememberConsent: false, logger: { warn() {}, error() {} } }).router);
  const browser = request.agent(app);
  const signInAs = async (user: string) => expect((await browser.post(`/account/login?user=${user}`)).status).toBe(204);
  const consentPage = async (state: string) => {
    const page = await browser.get(`/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret }, { state })}`);
    expect(page.status).toBe(200);
    return page.text;
  };
  return { store, browser, signInAs, consentPage };
}

function formOf(page: string) {
  return { csrf_token: hiddenField(page, 'csrf_token'), request_id: hiddenField(page, 'request_id'), resume: hiddenField(page, 'resume') };
}

/** A stale form's answer: back to the authorization request, nothing at the integration's address; the page then names `who`. */
async function expectAskedAgain(browser: request.Agent, posted: request.Response, who: string, state: string): Promise<void> {
  expect(posted.status).toBe(303);
  const location = new URL(posted.headers.location!, ISSUER);
  expect(location.pathname).toBe('/oauth2/authorize');
  expect(location.searchParams.get('oauth_router_notice')).toBe('consent_expired');
  expect(location.searchParams.get('state')).toBe(state);
  const page = await browser.get(posted.headers.location!);
  expect(page.status).toBe(200);
  expect(page.text).toContain(NOTICE);
  expect(page.text).toContain(`Host user ${who}`);
  // That page is theirs to answer: its Deny is the access_denied, with the old page's state.
  const denied = expectRedirectTo(await browser.post('/oauth2/consent').type('form').send({ ...formOf(page.text), decision: 'deny' }));
  expect(denied.searchParams.get('error')).toBe('access_denied');
  expect(denied.searchParams.get('state')).toBe(state);
}

describe('a consent form is bound to the user it was shown to (RFC 6749 §10.12; a host login that keeps the session)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the user it was shown to, still signed in: its Deny is the access_denied', async () => {
    const { browser, signInAs, consentPage } = await keptSessionHost();
    await signInAs('alice');
    const page = await consentPage('alice-tab');
    const denied = expectRedirectTo(await browser.post('/oauth2/consent').type('form').send({ ...formOf(page), decision: 'deny' }));
    expect(denied.searchParams.get('error')).toBe('access_denied');
  });

  it.each(['deny', 'allow'])('another user signed in since on the same session: its %s is not taken, the consent page asks the one signed in now', async (decision) => {
    const { store, browser, signInAs, consentPage } = await keptSessionHost();
    await signInAs('alice');
    const page = await consentPage('alice-tab');
    await signInAs('bob');
    const posted = await browser.post('/oauth2/consent').type('form').send({ ...formOf(page), decision });
    expect(posted.headers.location!.startsWith(REDIRECT_URI)).toBe(false);
    expect(await store.consents!.listConsents('bob')).toEqual([]);
    await expectAskedAgain(browser, posted, 'bob', 'alice-tab');
  });

  it('its request expired meanwhile: a Deny is not sent in the name of the user signed in now', async () => {
    const { browser, signInAs, consentPage } = await keptSessionHost();
    await signInAs('alice');
    const page = await consentPage('slow-tab');
    await signInAs('bob');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 11 * 60 * 1000);
    await expectAskedAgain(browser, await browser.post('/oauth2/consent').type('form').send({ ...formOf(page), decision: 'deny' }), 'bob', 'slow-tab');
  });

  it('its request dropped for newer ones, or denied already: a Deny is not sent again in the name of the user signed in now', async () => {
    const { browser, signInAs, consentPage } = await keptSessionHost();
    await signInAs('alice');
    const dropped = await consentPage('dropped-tab');
    for (let i = 0; i < 10; i += 1) await consentPage(`newer-${i}`);
    const answered = await consentPage('answered-tab');
    expectRedirectTo(await browser.post('/oauth2/consent').type('form').send({ ...formOf(answered), decision: 'deny' }));
    await signInAs('bob');
    await expectAskedAgain(browser, await browser.post('/oauth2/consent').type('form').send({ ...formOf(dropped), decision: 'deny' }), 'bob', 'dropped-tab');
    await expectAskedAgain(browser, await browser.post('/oauth2/consent').type('form').send({ ...formOf(answered), decision: 'deny' }), 'bob', 'answered-tab');
  });
});
