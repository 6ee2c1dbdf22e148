// SPEC §4.1 "Get authorization code" with RFC 6749 §4.1.1, §4.1.2 and §4.1.2.1: login, consent, redirect, errors.
import { describe, it, expect, beforeEach } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, ISSUER, REDIRECT_URI, USER, type TestApp } from '../helpers/app.js';
import { authorize, authorizeQuery, hiddenField, obtainCode, signIn } from '../helpers/browser-flow.js';
import {
  createPkcePair, getAuthorize, signedInAtConsent, expectErrorPage, expectRedirectTo, openLoginForm, postConsent, postLogin, redeemCode,
} from '../helpers/spec-requests.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { AuthorizationCodeRecord, Store } from '../../src/stores/contract.js';

const QUERY_REDIRECT_URI = 'http://localhost:8080/cb?tenant=a%20b';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});


describe('SPEC §4.1 / RFC 6749 §4.1.1: the resource owner signs in', () => {
  it('shows a 200 login page with inputs named username and password and hidden csrf_token and request_id when nobody is signed in', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toMatch(/<input[^>]*name="username"/);
    expect(res.text).toMatch(/<input[^>]*type="password"[^>]*name="password"/);
    expect(hiddenField(res.text, 'csrf_token')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(hiddenField(res.text, 'request_id')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(res.text).toMatch(/<input type="hidden" name="csrf_token"/);
    expect(res.text).toMatch(/<input type="hidden" name="request_id"/);
  });

  it('answers a wrong password with a 401 login page carrying an error, and signs nobody in', async () => {
    const agent = request.agent(t.app);
    const query = authorizeQuery(t.codeClient);
    const login = await openLoginForm(agent, '', query);
    const res = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId, password: 'wrong password' });
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('role="alert"');
    expect(res.text).toContain('The username or password is incorrect.');
    // The title, announced first, says the attempt failed (WCAG 2.4.2, 3.3.1); the form's own title does not.
    expect(res.text).toMatch(/<title>Error: Sign in – /);
    expect(login.res.text).toMatch(/<title>Sign in – /);
    expect(res.text).toMatch(/name="password"/);
    expect(res.text).not.toContain('name="decision"');
    // No session user: the same agent is still shown the login page, not the consent page.
    const again = await agent.get(`/oauth2/authorize?${query}`);
    expect(again.status).toBe(200);
    expect(again.text).toMatch(/name="password"/);
    expect(again.text).not.toContain('name="decision"');
  });

  it('answers an unknown username exactly like a wrong password', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
    const res = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId, username: 'mallory' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('The username or password is incorrect.');
  });

  it('redirects a successful login back to the authorization request (303), which then shows the consent page', async () => {
    const agent = request.agent(t.app);
    const query = authorizeQuery(t.codeClient);
    const login = await openLoginForm(agent, '', query);
    const res = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId });
    expect(res.status).toBe(303);
    expect(res.headers.location).toMatch(/^\/oauth2\/authorize\?/);
    const resumed = new URL(res.headers.location!, ISSUER).searchParams;
    expect(resumed.get('client_id')).toBe(t.codeClient.clientId);
    expect(resumed.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(resumed.get('state')).toBe('xyz-123');
  });

  it('shows a signed-in user the consent page naming the integration, with buttons decision=allow and decision=deny', async () => {
    const { agent } = await signedInAtConsent(t.app, t.codeClient);
    // A second request of the same browser goes straight to consent: no second login.
    const res = await agent.get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state: 'second' })}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('Acme CRM');
    // Names in the title are isolated (UAX #9), as `<bdi>` isolates them in the page: a right-to-left name keeps its `?`.
    expect(res.text).toMatch(/<title>Allow \u2068Acme CRM\u2069\? – \u2068[^<\u2069]+\u2069<\/title>/);
    expect(res.text).toContain(USER.displayName);
    expect(res.text).toMatch(/<button[^>]*type="submit"[^>]*name="decision"[^>]*value="allow"/);
    expect(res.text).toMatch(/<button[^>]*type="submit"[^>]*name="decision"[^>]*value="deny"/);
    expect(res.text).not.toMatch(/name="password"/);
  });
});

describe('RFC 6749 §4.1.2: the authorization response', () => {
  it('redirects Allow with 302 to redirect_uri carrying code, the state and iss', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const res = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    const callback = expectRedirectTo(res);
    expect(callback.searchParams.get('code')).toMatch(/^[0-9a-v]{11}\.[A-Za-z0-9_-]{43}$/);
    expect(callback.searchParams.get('state')).toBe('xyz-123');
    expect(callback.searchParams.get('iss')).toBe(ISSUER);
    expect(callback.searchParams.get('error')).toBeNull();
  });

  it('issues a code that the client can exchange at the token endpoint (SPEC §4.3)', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    const res = await redeemCode(t.app, '', t.codeClient, code);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    expect(typeof res.body.access_token).toBe('string');
    expect(typeof res.body.refresh_token).toBe('string');
  });

  it.each([
    ['spaces', 'a b  c'],
    ['ampersand and equals', 'a&b=c&code=forged'],
    ['unicode', 'état-✓-日本-😀'],
    ['percent signs', '100% %20 %zz %'],
    ['plus and slash', 'a+b/c?d#e'],
  ])('echoes a state with %s byte for byte ("exact value received from the client")', async (_label, state) => {
    const callback = await authorize(t.app, t.codeClient, { query: { state } });
    expect(callback.searchParams.getAll('state')).toEqual([state]);
    expect(callback.searchParams.getAll('code')).toHaveLength(1);
  });

  it('keeps state, the PKCE challenge and scope across the sign-in when an empty value of each came first (§3.1: an empty value is omitted)', async () => {
    const pkce = createPkcePair();
    const query = [
      `response_type=code&client_id=${encodeURIComponent(t.codeClient.clientId)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
      'state=&state=s1', `code_challenge=&code_challenge=${pkce.challenge}`, 'code_challenge_method=&code_challenge_method=S256',
      'scope=&scope=envelopes:read',
    ].join('&');
    const signedOutFlow = async (): Promise<URL> => {
      const agent = request.agent(t.app);
      const page = await signIn(agent, '', query);
      // The second time, the remembered consent skips the consent page.
      if (page.status === 302) return expectRedirectTo(page);
      return expectRedirectTo(await agent.post('/oauth2/consent').type('form').send({
        csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), decision: 'allow',
      }));
    };
    const first = await signedOutFlow();
    expect(first.searchParams.getAll('state')).toEqual(['s1']);
    // RFC 7636 §4.6: the code is bound to the challenge the request carried, so a redemption without its verifier fails.
    const without = await redeemCode(t.app, '', t.codeClient, first.searchParams.get('code')!);
    expect(without.status).toBe(400);
    expect(without.body.error).toBe('invalid_grant');
    const second = await signedOutFlow();
    const redeemed = await redeemCode(t.app, '', t.codeClient, second.searchParams.get('code')!, { code_verifier: pkce.verifier });
    expect(redeemed.status).toBe(200);
    // The scope asked for, not the integration's default (both of its scopes).
    const introspected = await request(t.app).post('/oauth2/introspect').type('form')
      .set('Authorization', basic(t.codeClient)).send({ token: redeemed.body.access_token });
    expect(introspected.body.scope).toBe('envelopes:read');
  });

  it('sends no state when the request had none', async () => {
    const callback = await authorize(t.app, t.codeClient, { query: { state: undefined } });
    expect(callback.searchParams.has('state')).toBe(false);
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  it('keeps the redirect_uri\'s own query exactly and appends the response parameters to it', async () => {
    const callback = await authorize(t.app, t.codeClient, { query: { redirect_uri: QUERY_REDIRECT_URI } });
    expect(callback.href.startsWith(`${QUERY_REDIRECT_URI}&code=`)).toBe(true);
    expect(callback.searchParams.get('tenant')).toBe('a b');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
  });

  it('redirects Deny with error=access_denied, the state and iss, and no code', async () => {
    const callback = await authorize(t.app, t.codeClient, { decision: 'deny', query: { state: 's p&a%ce' } });
    expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe('s p&a%ce');
    expect(callback.searchParams.get('iss')).toBe(ISSUER);
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it('refuses a consent decision other than allow or deny without redirecting', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    const res = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'maybe' });
    expectErrorPage(res, 400);
  });

  it('lets a code live at most 10 minutes by default ("maximum authorization code lifetime of 10 minutes")', async () => {
    const saved: AuthorizationCodeRecord[] = [];
    const memory = createMemoryStore();
    const recording: Store = {
      ...memory,
      codes: { ...memory.codes, saveCode: async (record) => { saved.push(record); await memory.codes.saveCode(record); } },
    };
    const app = await createTestApp({}, recording);
    const before = Date.now();
    const code = await obtainCode(app.app, app.codeClient);
    expect(saved).toHaveLength(1);
    expect(saved[0]!.codeHash).not.toBe(code); // DESIGN §3: only the hash is stored
    const lifetime = saved[0]!.expiresAt.getTime() - before;
    expect(lifetime).toBeGreaterThan(0);
    expect(lifetime).toBeLessThanOrEqual(600_000 + 1_000);
  });

  it('refuses a code redeemed after authorizationCodeTtl with invalid_grant', async () => {
    const short = await createTestApp({ authorizationCodeTtl: 1 });
    const code = await obtainCode(short.app, short.codeClient);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const res = await redeemCode(short.app, '', short.codeClient, code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });
});

describe('RFC 6749 §4.1.2.1: an invalid client or redirect_uri shows an error page and never redirects', () => {
  // "If the request fails due to a missing, invalid, or mismatching redirection URI, or if the client
  // identifier is missing or invalid, the authorization server SHOULD inform the resource owner of the error
  // and MUST NOT automatically redirect the user-agent to the invalid redirection URI."
  it('shows an error page for an unknown client_id: in plain words for the user first, the protocol details after, to pass on', async () => {
    const res = await getAuthorize(t.app, authorizeQuery({ clientId: 'no-such-client', clientSecret: 'x' }));
    const page = expectErrorPage(res);
    expect(page).toContain('<p class="error" role="alert">The application that sent you here made a request this service cannot accept, so you have not been sent back to it.</p>');
    expect(page).toContain('contact its support with these details: <code>invalid_client</code>: unknown client_id.');
  });

  it('shows an error page for a missing client_id', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { client_id: undefined }));
    expect(expectErrorPage(res)).toContain('client_id');
  });

  it('shows an error page for an empty client_id', async () => {
    expectErrorPage(await getAuthorize(t.app, authorizeQuery(t.codeClient, { client_id: '' })));
  });

  it('shows an error page for a missing redirect_uri', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { redirect_uri: undefined }));
    expect(expectErrorPage(res)).toContain('redirect_uri');
  });

  it('shows an error page for an unregistered redirect_uri', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { redirect_uri: 'https://attacker.example/callback' }));
    expect(expectErrorPage(res)).toContain('redirect_uri');
  });

  it.each([
    ['a trailing slash', `${REDIRECT_URI}/`],
    ['a different path case', 'https://client.example/Callback'],
    ['a different host case', 'https://CLIENT.example/callback'],
    ['an extra query', `${REDIRECT_URI}?x=1`],
    ['an empty query', `${REDIRECT_URI}?`],
    ['a fragment', `${REDIRECT_URI}#frag`],
    ['an explicit default port', 'https://client.example:443/callback'],
    ['http instead of https', 'http://client.example/callback'],
    ['a re-encoded registered query', 'http://localhost:8080/cb?tenant=a+b'],
    ['a missing registered query', 'http://localhost:8080/cb'],
  ])('shows an error page for a redirect_uri differing from the registered one by %s (exact match)', async (_label, redirectUri) => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { redirect_uri: redirectUri }));
    expectErrorPage(res);
  });

  it('shows an error page for a repeated client_id', async () => {
    const res = await getAuthorize(t.app, `${authorizeQuery(t.codeClient)}&client_id=${encodeURIComponent(t.codeClient.clientId)}`);
    expect(expectErrorPage(res)).toContain('invalid_request');
  });

  it('shows an error page for a repeated redirect_uri', async () => {
    const res = await getAuthorize(t.app, `${authorizeQuery(t.codeClient)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`);
    expectErrorPage(res);
  });

  it('shows an error page for a client_credentials integration (it has no redirect URI that could be registered)', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.credentialsClient));
    expectErrorPage(res);
  });

  it('shows an error page for a disabled integration', async () => {
    await t.store.clients.updateClient!(t.codeClient.clientId, { disabled: true });
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient));
    expectErrorPage(res);
  });

  it.each([
    ['disabled', { disabled: true }],
    ['no longer registering the redirect_uri', { redirectUris: ['https://client.example.com/other'] }],
  ] as const)('shows an error page at Allow or Deny for an integration %s while the consent page was open: no code, consent or redirect', async (_label, change) => {
    for (const decision of ['allow', 'deny']) {
      const fresh = await createTestApp({ rememberConsent: true });
      const { agent, consent } = await signedInAtConsent(fresh.app, fresh.codeClient);
      await fresh.store.clients.updateClient!(fresh.codeClient.clientId, change);
      const page = expectErrorPage(await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision }));
      expect(page, decision).not.toContain('code=');
      expect(await fresh.store.consents!.findConsent(USER.id, fresh.codeClient.clientId), decision).toBeNull();
    }
  });

  it('shows an error page at Allow for an integration deleted while the consent page was open', async () => {
    const { agent, consent } = await signedInAtConsent(t.app, t.codeClient);
    await t.store.clients.deleteClient!(t.codeClient.clientId);
    expectErrorPage(await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' }));
  });

  it('checks client_id and redirect_uri before anything else: a bad response_type with a bad redirect_uri still gets the page', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: 'token', redirect_uri: 'https://attacker.example/' }));
    expectErrorPage(res);
  });
});

describe('RFC 6749 §4.1.2.1: other errors are redirected to the trusted redirect_uri with error and state', () => {
  // "If the resource owner denies the access request or if the request fails for reasons other than a missing
  // or invalid redirection URI, the authorization server informs the client by adding the following
  // parameters to the query component of the redirection URI"
  it('redirects error=invalid_request with state when response_type is missing', async () => {
    const callback = expectRedirectTo(await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: undefined })));
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
    expect(callback.searchParams.get('iss')).toBe(ISSUER);
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it('redirects error=unsupported_response_type with state when response_type is token, in the fragment (RFC 6749 §4.2.2.1)', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: 'token' }));
    expect(res.status).toBe(302);
    const callback = new URL(res.headers.location!);
    expect(`${callback.origin}${callback.pathname}${callback.search}`).toBe(REDIRECT_URI);
    const fragment = new URLSearchParams(callback.hash.slice(1));
    expect(fragment.get('error')).toBe('unsupported_response_type');
    expect(fragment.get('state')).toBe('xyz-123');
    expect(fragment.has('code')).toBe(false);
  });

  it('redirects error=unsupported_response_type when response_type is "code token", in the fragment (hybrid)', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: 'code token' }));
    expect(new URLSearchParams(new URL(res.headers.location!).hash.slice(1)).get('error')).toBe('unsupported_response_type');
  });

  it('redirects error=unsupported_response_type with state when response_type is foo, in the query', async () => {
    const callback = expectRedirectTo(await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: 'foo' })));
    expect(callback.searchParams.get('error')).toBe('unsupported_response_type');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
    expect(callback.hash).toBe('');
  });

  it('redirects error=invalid_scope with state for a scope the integration may not have', async () => {
    const callback = expectRedirectTo(await getAuthorize(t.app, authorizeQuery(t.codeClient, { scope: 'envelopes:read admin' })));
    expect(callback.searchParams.get('error')).toBe('invalid_scope');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
  });

  it('shows an error page for a repeated state: no error redirect could echo "the exact value received"', async () => {
    const page = expectErrorPage(await getAuthorize(t.app, `${authorizeQuery(t.codeClient)}&state=other`));
    expect(page).toContain('parameter state is repeated');
  });

  it('treats empty values as omitted (§3.1): scope= twice is no scope, not a repeated one', async () => {
    const res = await getAuthorize(t.app, `${authorizeQuery(t.codeClient, { scope: undefined })}&scope=&scope=`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('name="password"');
  });

  it('redirects error=invalid_request with state for a repeated scope', async () => {
    const res = await getAuthorize(t.app, `${authorizeQuery(t.codeClient, { scope: 'envelopes:read' })}&scope=envelopes:sign`);
    const callback = expectRedirectTo(res);
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
  });

  it('redirects errors to a redirect_uri with its own query, keeping that query', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { redirect_uri: QUERY_REDIRECT_URI, response_type: 'foo' }));
    const callback = expectRedirectTo(res, QUERY_REDIRECT_URI);
    expect(callback.searchParams.get('tenant')).toBe('a b');
    expect(callback.searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('shows an error page, never a redirect, for a redirect_uri stored with state in its query (a tool writing the store): the answer would repeat it', async () => {
    const fixed = 'https://client.example.com/fixed?state=fixed';
    await t.store.clients.updateClient!(t.codeClient.clientId, { redirectUris: [REDIRECT_URI, fixed] });
    const page = expectErrorPage(await getAuthorize(t.app, authorizeQuery(t.codeClient, { redirect_uri: fixed })));
    expect(page).toContain('has state in its query');
  });

  it('redirects error=unauthorized_client for a client_credentials integration given a redirect URI (a tool writing the store): no sign-in, no code', async () => {
    await t.store.clients.updateClient!(t.credentialsClient.clientId, { redirectUris: [REDIRECT_URI] });
    const res = await getAuthorize(t.app, authorizeQuery(t.credentialsClient));
    expect(res.text).not.toMatch(/name="password"/);
    const callback = expectRedirectTo(res);
    expect(callback.searchParams.get('error')).toBe('unauthorized_client');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it('redirects the error before showing the login page: a signed-out browser is not asked to sign in for a bad request', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: 'token' }));
    expect(res.status).toBe(302);
    expect(res.text).not.toMatch(/name="password"/);
  });
});

describe('RFC 6749 §4.2.2.1: a request for the implicit flow gets its error in the fragment, where such a client reads it', () => {
  // "the authorization server informs the client by adding the following parameters to the fragment component of
  // the redirection URI" (§4.2.2.1); OAuth 2.0 Multiple Response Type Encoding Practices §5 makes the fragment the
  // default for every response_type holding token or id_token.
  /** The redirect's fragment, read as the form-encoded parameters it holds; its URL without the fragment. */
  function fragmentOf(res: request.Response): { url: string; params: URLSearchParams } {
    expect(res.status).toBe(302);
    const location = res.headers.location!;
    const at = location.indexOf('#');
    expect(at, location).toBeGreaterThan(-1);
    return { url: location.slice(0, at), params: new URLSearchParams(location.slice(at + 1)) };
  }

  it.each(['token', 'code token', 'id_token', 'id_token token', 'code id_token token'])(
    'response_type=%s: unsupported_response_type, state and iss in the fragment, nothing in the query',
    async (responseType) => {
      const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: responseType }));
      const { url, params } = fragmentOf(res);
      expect(url).toBe(REDIRECT_URI);
      expect(params.get('error')).toBe('unsupported_response_type');
      expect(params.get('state')).toBe('xyz-123');
      expect(params.get('iss')).toBe(ISSUER);
      expect(params.has('code')).toBe(false);
    },
  );

  it('keeps the registered redirect_uri\'s own query as it is, and puts the error after it in the fragment', async () => {
    const res = await getAuthorize(t.app, authorizeQuery(t.codeClient, { redirect_uri: QUERY_REDIRECT_URI, response_type: 'token' }));
    const { url, params } = fragmentOf(res);
    expect(url).toBe(QUERY_REDIRECT_URI);
    expect(params.get('error')).toBe('unsupported_response_type');
  });

  it('puts any error of such a request in the fragment: a repeated scope beside response_type=token', async () => {
    const res = await getAuthorize(t.app, `${authorizeQuery(t.codeClient, { response_type: 'token', scope: 'envelopes:read' })}&scope=envelopes:sign`);
    expect(fragmentOf(res).params.get('error')).toBe('invalid_request');
  });

  it('follows an explicit response_mode=query, the one mode the metadata lists', async () => {
    const callback = expectRedirectTo(await getAuthorize(t.app, `${authorizeQuery(t.codeClient, { response_type: 'token' })}&response_mode=query`));
    expect(callback.searchParams.get('error')).toBe('unsupported_response_type');
    expect(callback.hash).toBe('');
  });

  it('ignores a response_mode it does not support: response_mode=fragment leaves a code request\'s errors in the query', async () => {
    const callback = expectRedirectTo(await getAuthorize(t.app, `${authorizeQuery(t.codeClient, { scope: 'envelopes:read admin' })}&response_mode=fragment`));
    expect(callback.searchParams.get('error')).toBe('invalid_scope');
    expect(callback.hash).toBe('');
  });

  it('still shows the error page, never a redirect, when the client or redirect_uri is wrong', async () => {
    expectErrorPage(await getAuthorize(t.app, authorizeQuery(t.codeClient, { response_type: 'token', redirect_uri: 'https://attacker.example/' })));
    expectErrorPage(await getAuthorize(t.app, authorizeQuery({ clientId: 'nobody', clientSecret: '' }, { response_type: 'token' })));
  });
});
