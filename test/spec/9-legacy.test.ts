// SPEC §9 and DESIGN §5: credentials issued before 2021-01-15 use the legacy address {legacy_auth_url}, the rest {auth_url}.
import { describe, it, expect, beforeEach } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, ISSUER, LEGACY_ISSUER, REDIRECT_URI, USER, type TestApp, type TestClient } from '../helpers/app.js';
import { authorize, authorizeQuery, hiddenField, obtainCode, signInAndGetConsent } from '../helpers/browser-flow.js';
import { consentForm, expectErrorPage, openLoginForm, postConsent, postLogin, redeemCode, tokenRequest } from '../helpers/spec-requests.js';
import { registerClient } from '../../src/clients/register-client.js';
import { listen, rawRequest } from '../helpers/raw-http.js';
import type { Store } from '../../src/stores/contract.js';

// SPEC §9: "Credentials issued before January 15th, 2021 use the legacy authorization server at
// {legacy_auth_url} in place of {auth_url}." / "Credentials issued on or after that date use {auth_url}."

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});

/** Registers an integration of `flow` whose credentials count as issued at `issuedAt`. */
async function registerIssuedAt(store: Store, issuedAt: Date, flow: 'authorization_code' | 'client_credentials' = 'client_credentials'): Promise<TestClient> {
  const { client, clientSecret } = await registerClient(store, {
    name: `Issued ${issuedAt.toISOString()}`, flow, allowedScopes: ['envelopes:read'],
    redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [], credentialsIssuedAt: issuedAt,
  });
  return { clientId: client.clientId, clientSecret };
}

function clientCredentials(app: TestApp['app'], prefix: string, client: TestClient, host?: string) {
  return tokenRequest(app, prefix, client, { grant_type: 'client_credentials', client_id: client.clientId }, host);
}

/** Asserts 401 invalid_client with a Basic challenge and returns the error_description. */
function expectInvalidClient(res: request.Response): string {
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_client');
  expect(res.headers['www-authenticate']).toMatch(/^Basic realm="/);
  return res.body.error_description as string;
}

describe('SPEC §9 at the token endpoint: each integration is served at one address', () => {
  it('serves a legacy integration at {legacy_auth_url}/oauth2/token', async () => {
    const res = await clientCredentials(t.app, '/legacy', t.legacyCredentialsClient);
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.refresh_token).toBeUndefined();
  });

  it('serves a current integration at {auth_url}/oauth2/token', async () => {
    const res = await clientCredentials(t.app, '', t.credentialsClient);
    expect(res.status).toBe(200);
  });

  it('refuses a legacy integration at {auth_url} with 401 invalid_client naming {legacy_auth_url}', async () => {
    const description = expectInvalidClient(await clientCredentials(t.app, '', t.legacyCredentialsClient));
    expect(description).toBe(`this integration's credentials were first issued before 2021-01-15: use the legacy authorization server at ${LEGACY_ISSUER}`);
  });

  it('keeps a legacy integration at {legacy_auth_url} when its secret is rotated: the date is the integration\'s, not the secret\'s', async () => {
    const { rotateClientSecretWithGrace } = await import('../../src/clients/rotate-client-secret.js');
    const { clientSecret } = await rotateClientSecretWithGrace(t.store, t.legacyCredentialsClient.clientId);
    const rotated = { clientId: t.legacyCredentialsClient.clientId, clientSecret };
    expect((await clientCredentials(t.app, '/legacy', rotated)).status).toBe(200);
    expect(expectInvalidClient(await clientCredentials(t.app, '', rotated))).toContain(`first issued before 2021-01-15: use the legacy authorization server at ${LEGACY_ISSUER}`);
  });

  it('refuses a current integration at {legacy_auth_url} with 401 invalid_client naming {auth_url} (and not the legacy one)', async () => {
    const description = expectInvalidClient(await clientCredentials(t.app, '/legacy', t.credentialsClient));
    expect(description).toContain(`at ${ISSUER}`);
    expect(description).not.toContain(LEGACY_ISSUER);
  });

  it('refuses a legacy authorization_code integration at {auth_url} before looking at the grant', async () => {
    const res = await redeemCode(t.app, '', t.legacyCodeClient, 'not-a-code');
    expect(expectInvalidClient(res)).toContain(LEGACY_ISSUER);
  });

  it('names no address when the secret is wrong: the body is the plain invalid_client, identical for unknown and known ids', async () => {
    const wrongLegacy = { ...t.legacyCredentialsClient, clientSecret: 'wrong-secret' };
    const wrongCurrent = { ...t.credentialsClient, clientSecret: 'wrong-secret' };
    const unknown = { clientId: 'no-such-client', clientSecret: 'wrong-secret' };
    const answers = [
      await clientCredentials(t.app, '', wrongLegacy), // known legacy id at the wrong address
      await clientCredentials(t.app, '/legacy', wrongCurrent), // known current id at the wrong address
      await clientCredentials(t.app, '', unknown),
      await clientCredentials(t.app, '/legacy', unknown),
      await clientCredentials(t.app, '', wrongCurrent), // known id at its own address
    ];
    for (const res of answers) {
      expect(expectInvalidClient(res)).not.toMatch(/auth\.test|legacy|issued/);
    }
    const bodies = answers.map((res) => res.text);
    expect(new Set(bodies).size).toBe(1);
    const challenges = answers.map((res) => res.headers['www-authenticate']);
    expect(new Set(challenges).size).toBe(1);
  });

  it('treats credentials issued at 2021-01-14T23:59:59.999Z as legacy', async () => {
    const client = await registerIssuedAt(t.store, new Date('2021-01-14T23:59:59.999Z'));
    expect((await clientCredentials(t.app, '/legacy', client)).status).toBe(200);
    expect(expectInvalidClient(await clientCredentials(t.app, '', client))).toContain(LEGACY_ISSUER);
  });

  it('treats credentials issued at 2021-01-15T00:00:00Z as current ("on or after that date")', async () => {
    const client = await registerIssuedAt(t.store, new Date('2021-01-15T00:00:00Z'));
    expect((await clientCredentials(t.app, '', client)).status).toBe(200);
    expect(expectInvalidClient(await clientCredentials(t.app, '/legacy', client))).toContain(`at ${ISSUER}`);
  });

  it('moves the boundary with legacy.credentialsIssuedBefore', async () => {
    const later = await createTestApp({ legacy: { issuer: LEGACY_ISSUER, credentialsIssuedBefore: '2022-01-01' } });
    const client2021 = await registerIssuedAt(later.store, new Date('2021-06-01T00:00:00Z'));
    expect((await clientCredentials(later.app, '/legacy', client2021)).status).toBe(200);
    const description = expectInvalidClient(await clientCredentials(later.app, '', client2021));
    expect(description).toContain(LEGACY_ISSUER);
    expect(description).toContain('2022-01-01');

    const earlier = await createTestApp({ legacy: { issuer: LEGACY_ISSUER, credentialsIssuedBefore: new Date('2020-01-01T00:00:00Z') } });
    // The helper's "legacy" integrations (issued 2020-06-01) are now current.
    expect((await clientCredentials(earlier.app, '', earlier.legacyCredentialsClient)).status).toBe(200);
    expect(expectInvalidClient(await clientCredentials(earlier.app, '/legacy', earlier.legacyCredentialsClient))).toContain(`at ${ISSUER}`);
  });

  it('refuses a credentials issue date in the future, which would pick an address by typo', async () => {
    const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
    await expect(registerIssuedAt(t.store, tomorrow)).rejects.toThrow('credentialsIssuedAt must not be in the future');
  });

  it('serves no legacy address with legacy: false: {legacy_auth_url}/oauth2/token is 404 and every integration uses {auth_url}', async () => {
    const single = await createTestApp({ legacy: false });
    const res = await clientCredentials(single.app, '/legacy', single.credentialsClient);
    expect(res.status).toBe(404);
    expect((await request(single.app).get(`/legacy/oauth2/authorize?${authorizeQuery(single.codeClient)}`)).status).toBe(404);
    expect((await clientCredentials(single.app, '', single.legacyCredentialsClient)).status).toBe(200);
  });
});

describe('SPEC §9 at the authorization endpoint (DESIGN §5: an error page naming the right address, never a redirect)', () => {
  it('shows a legacy integration at {auth_url}/oauth2/authorize an error page naming {legacy_auth_url}', async () => {
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.legacyCodeClient)}`);
    expect(expectErrorPage(res)).toContain(LEGACY_ISSUER);
  });

  it('shows a current integration at {legacy_auth_url}/oauth2/authorize an error page naming {auth_url}', async () => {
    const res = await request(t.app).get(`/legacy/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    const page = expectErrorPage(res);
    expect(page).toContain(`at ${ISSUER}`);
    expect(page).not.toContain(LEGACY_ISSUER);
  });

  it('shows the wrong-address page even when the rest of the request is also wrong (no redirect to leak through)', async () => {
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.legacyCodeClient, { response_type: 'token' })}`);
    expectErrorPage(res);
  });
});

describe('SPEC §9: the authorization code flow at {legacy_auth_url}', () => {
  it('runs the whole flow at /legacy: the callback names the legacy issuer and the code redeems there', async () => {
    const callback = await authorize(t.app, t.legacyCodeClient, { prefix: '/legacy' });
    expect(callback.searchParams.get('iss')).toBe(LEGACY_ISSUER);
    expect(callback.searchParams.get('state')).toBe('xyz-123');
    const res = await redeemCode(t.app, '/legacy', t.legacyCodeClient, callback.searchParams.get('code')!);
    expect(res.status).toBe(200);
    expect(typeof res.body.refresh_token).toBe('string');
    const refreshed = await tokenRequest(t.app, '/legacy', t.legacyCodeClient, {
      grant_type: 'refresh_token', client_id: t.legacyCodeClient.clientId, refresh_token: res.body.refresh_token,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBeUndefined();
  });

  it('does not answer a legacy request_id at the main login form (400)', async () => {
    const agent = request.agent(t.app);
    const login = await openLoginForm(agent, '/legacy', authorizeQuery(t.legacyCodeClient));
    const res = await postLogin(agent, '', { csrf_token: login.csrfToken, request_id: login.requestId });
    expectErrorPage(res, 400);
  });

  it('does not answer a legacy request_id at the main consent form (400, no code)', async () => {
    const agent = request.agent(t.app);
    const consent = consentForm(await signInAndGetConsent(agent, '/legacy', authorizeQuery(t.legacyCodeClient)));
    const res = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    expectErrorPage(res, 400);
    // The request is still pending at its own address.
    const own = await postConsent(agent, '/legacy', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    expect(own.status).toBe(303);
    expect(new URL(own.headers.location!).searchParams.get('iss')).toBe(LEGACY_ISSUER);
  });

  it('refuses a legacy code presented by its client at {auth_url} (wrong address), without using the code up', async () => {
    const code = await obtainCode(t.app, t.legacyCodeClient, { prefix: '/legacy' });
    const wrong = await redeemCode(t.app, '', t.legacyCodeClient, code);
    expect(expectInvalidClient(wrong)).toContain(LEGACY_ISSUER);
    expect(wrong.body.access_token).toBeUndefined();
    // Client authentication failed before the code was looked at, so it still redeems at its own address.
    expect((await redeemCode(t.app, '/legacy', t.legacyCodeClient, code)).status).toBe(200);
  });

  it('binds a code to the issuer that issued it: redeemed at the other issuer by a client now served there, it is invalid_grant', async () => {
    // DESIGN §5: "a code issued at one is redeemable only at that one". Clients are bound to one address, so
    // the only way a client reaches the other issuer's token endpoint is a cutoff change between issuing
    // and redeeming: a second instance on the same store whose cutoff makes this client current.
    const code = await obtainCode(t.app, t.legacyCodeClient, { prefix: '/legacy' });
    const moved = await createTestApp({ legacy: { issuer: LEGACY_ISSUER, credentialsIssuedBefore: '2020-01-01' } }, t.store);
    const res = await redeemCode(moved.app, '', t.legacyCodeClient, code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(res.body.access_token).toBeUndefined();
  });

  it('binds a main-issuer code the same way: redeemed at /legacy by a client now served there, it is invalid_grant', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    const moved = await createTestApp({ legacy: { issuer: LEGACY_ISSUER, credentialsIssuedBefore: '2100-01-01' } }, t.store);
    const res = await redeemCode(moved.app, '/legacy', t.codeClient, code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it('binds a refresh token the same way: presented at the other issuer by a client now served there, it is invalid_grant (RFC 6749 §6)', async () => {
    const code = await obtainCode(t.app, t.legacyCodeClient, { prefix: '/legacy' });
    const tokens = await redeemCode(t.app, '/legacy', t.legacyCodeClient, code);
    expect(tokens.status).toBe(200);
    const moved = await createTestApp({ legacy: { issuer: LEGACY_ISSUER, credentialsIssuedBefore: '2020-01-01' } }, t.store);
    const res = await tokenRequest(moved.app, '', t.legacyCodeClient, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(res.body.access_token).toBeUndefined();
  });
});

describe('SPEC §9 / DESIGN §1: requireBearer accepts the tokens of both addresses', () => {
  it('accepts a token from {auth_url} and says req.auth.issuer is {auth_url}', async () => {
    const token = (await clientCredentials(t.app, '', t.credentialsClient)).body.access_token as string;
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(me.status).toBe(200);
    expect(me.body.issuer).toBe(ISSUER);
    expect(me.body.clientId).toBe(t.credentialsClient.clientId);
  });

  it('accepts a token from {legacy_auth_url} and says req.auth.issuer is {legacy_auth_url}', async () => {
    const token = (await clientCredentials(t.app, '/legacy', t.legacyCredentialsClient)).body.access_token as string;
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(me.status).toBe(200);
    expect(me.body.issuer).toBe(LEGACY_ISSUER);
    expect(me.body.clientId).toBe(t.legacyCredentialsClient.clientId);
  });

  it('accepts a user token from the legacy code flow, naming the user', async () => {
    const code = await obtainCode(t.app, t.legacyCodeClient, { prefix: '/legacy' });
    const token = (await redeemCode(t.app, '/legacy', t.legacyCodeClient, code)).body.access_token as string;
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(me.status).toBe(200);
    expect(me.body.issuer).toBe(LEGACY_ISSUER);
    expect(me.body.userId).toBe(USER.id);
  });
});

describe('SPEC §9 with two host names on the same path (legacy issuer http://legacy-auth.test)', () => {
  const LEGACY_HOST_ISSUER = 'http://legacy-auth.test';
  let hosts: TestApp;
  beforeEach(async () => {
    hosts = await createTestApp({ issuer: ISSUER, legacy: { issuer: LEGACY_HOST_ISSUER } });
  });

  it('serves a legacy integration at Host: legacy-auth.test', async () => {
    const res = await clientCredentials(hosts.app, '', hosts.legacyCredentialsClient, 'legacy-auth.test');
    expect(res.status).toBe(200);
    const me = await request(hosts.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.body.issuer).toBe(LEGACY_HOST_ISSUER);
  });

  it('refuses a legacy integration at Host: auth.test with invalid_client naming http://legacy-auth.test', async () => {
    const res = await clientCredentials(hosts.app, '', hosts.legacyCredentialsClient, 'auth.test');
    expect(expectInvalidClient(res)).toContain(LEGACY_HOST_ISSUER);
  });

  it('refuses a current integration at Host: legacy-auth.test with invalid_client naming http://auth.test', async () => {
    const res = await clientCredentials(hosts.app, '', hosts.credentialsClient, 'legacy-auth.test');
    const description = expectInvalidClient(res);
    expect(description).toContain(`at ${ISSUER}`);
    expect(description).not.toContain(LEGACY_HOST_ISSUER);
  });

  it('serves a current integration at Host: auth.test', async () => {
    expect((await clientCredentials(hosts.app, '', hosts.credentialsClient, 'auth.test')).status).toBe(200);
  });

  it('behind a proxy the host app trusts (trust proxy), X-Forwarded-Host picks the address the client used', async () => {
    hosts.app.set('trust proxy', 'loopback');
    const viaProxy = (client: TestClient, forwardedHost: string) => request(hosts.app).post('/oauth2/token')
      .set('Host', '127.0.0.1:3000').set('X-Forwarded-Host', forwardedHost).set('Authorization', basic(client)).type('form')
      .send({ grant_type: 'client_credentials' });
    const legacy = await viaProxy(hosts.legacyCredentialsClient, 'legacy-auth.test, 127.0.0.1:3000');
    expect(legacy.status).toBe(200);
    const me = await request(hosts.app).get('/api/v1/me').set('Authorization', `Bearer ${legacy.body.access_token}`);
    expect(me.body.issuer).toBe(LEGACY_HOST_ISSUER);
    expect(expectInvalidClient(await viaProxy(hosts.credentialsClient, 'legacy-auth.test'))).toContain(`at ${ISSUER}`);
    const metadata = await request(hosts.app).get('/.well-known/oauth-authorization-server')
      .set('Host', '127.0.0.1:3000').set('X-Forwarded-Host', 'legacy-auth.test');
    expect(metadata.body.issuer).toBe(LEGACY_HOST_ISSUER);
    // Chosen by host: kept from shared caches, and a client's own cache keys it by X-Forwarded-Host too.
    expect(metadata.headers['cache-control']).toBe('private, max-age=300');
    expect(metadata.headers.vary).toBe('Host, X-Forwarded-Host');
  });

  it('keeps the metadata of each host name out of shared caches (private), and says Vary: Host for the client\'s own', async () => {
    // nginx's default proxy_cache_key is $scheme$proxy_host$request_uri: behind `proxy_pass http://127.0.0.1:3000`
    // both host names share one key. Vary: Host was not enough to keep them apart there: nginx matches Vary against
    // the client's Host line, while an absolute-form target (`GET http://legacy-auth.test/.well-known/… HTTP/1.1` with
    // `Host: auth.test`) sets the $host it passes on, so one such request filed the legacy document under
    // `Host: auth.test` for five minutes (nginx 1.22; RFC 8414 §3.3: clients then refuse it). A cache that ignores
    // Vary (many CDNs honour only Accept-Encoding) does the same with no trick at all. The app sees only the host it
    // is passed, never the key a cache files its answer under: no shared cache may keep it.
    for (const [host, issuer] of [['auth.test', ISSUER], ['legacy-auth.test', LEGACY_HOST_ISSUER]] as const) {
      const metadata = await request(hosts.app).get('/.well-known/oauth-authorization-server').set('Host', host);
      expect(metadata.body.issuer).toBe(issuer);
      expect(metadata.headers['cache-control']).toBe('private, max-age=300');
      expect(metadata.headers.vary).toBe('Host, X-Forwarded-Host');
    }
    const server = await listen(hosts.app);
    try {
      const absolute = await rawRequest(server.port, 'GET http://legacy-auth.test/.well-known/oauth-authorization-server HTTP/1.1\r\nHost: auth.test\r\nConnection: close');
      expect(JSON.parse(absolute.body).issuer).toBe(LEGACY_HOST_ISSUER);
      expect(absolute.headers).toContainEqual(['cache-control', 'private, max-age=300']);
    } finally {
      await server.close();
    }
    // One issuer per path: the document does not depend on the host, and stays public.
    const single = await request(t.app).get('/.well-known/oauth-authorization-server/legacy').set('Host', 'anything.test');
    expect([single.body.issuer, single.headers['cache-control'], single.headers.vary]).toEqual([LEGACY_ISSUER, 'public, max-age=300', undefined]);
  });

  it('without trust proxy, X-Forwarded-Host is anybody\'s to send and the Host header decides', async () => {
    const res = await request(hosts.app).post('/oauth2/token').set('Host', 'auth.test').set('X-Forwarded-Host', 'legacy-auth.test')
      .set('Authorization', basic(hosts.legacyCredentialsClient)).type('form').send({ grant_type: 'client_credentials' });
    expect(expectInvalidClient(res)).toContain(LEGACY_HOST_ISSUER);
  });

  it('has no /legacy path: the legacy address is a host, not a path', async () => {
    expect((await clientCredentials(hosts.app, '/legacy', hosts.legacyCredentialsClient, 'auth.test')).status).toBe(404);
  });

  it('runs the code flow at Host: legacy-auth.test with iss naming it, and the code redeems only there', async () => {
    const agent = request.agent(hosts.app);
    const host = 'legacy-auth.test';
    const query = authorizeQuery(hosts.legacyCodeClient);
    const login = await agent.get(`/oauth2/authorize?${query}`).set('Host', host);
    expect(login.status).toBe(200);
    const posted = await agent.post('/oauth2/login').set('Host', host).type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(posted.status).toBe(303);
    const consent = await agent.get(posted.headers.location!).set('Host', host);
    expect(consent.status).toBe(200);
    const decided = await agent.post('/oauth2/consent').set('Host', host).type('form').send({
      csrf_token: hiddenField(consent.text, 'csrf_token'), request_id: hiddenField(consent.text, 'request_id'), decision: 'allow',
    });
    expect(decided.status).toBe(303);
    const callback = new URL(decided.headers.location!);
    expect(callback.searchParams.get('iss')).toBe(LEGACY_HOST_ISSUER);
    const code = callback.searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', client_id: hosts.legacyCodeClient.clientId, redirect_uri: REDIRECT_URI, code };
    expect((await tokenRequest(hosts.app, '', hosts.legacyCodeClient, form, 'auth.test')).status).toBe(401);
    expect((await tokenRequest(hosts.app, '', hosts.legacyCodeClient, form, host)).status).toBe(200);
  });

  // RFC 9110 §4.2.3: a host name is case-insensitive and the default port may be spelt out (Go's net/http sends the
  // URL's ":80" as written); DNS takes "legacy-auth.test." for the same name. Sent on a socket, as a client writes them.
  it('takes another spelling of Host: legacy-auth.test (case, :80, a trailing dot) for the legacy address, and another port for the main one', async () => {
    const server = await listen(hosts.app);
    try {
      const post = (client: TestClient, host: string) => rawRequest(server.port, [
        'POST /oauth2/token HTTP/1.1', `Host: ${host}`, `Authorization: ${basic(client)}`,
        'Content-Type: application/x-www-form-urlencoded', 'Content-Length: 29', 'Connection: close',
      ].join('\r\n'), 'grant_type=client_credentials', { keepOpen: true });
      for (const host of ['LEGACY-AUTH.test', 'legacy-auth.test:80', 'legacy-auth.test.', 'Legacy-Auth.Test.:080']) {
        const legacy = await post(hosts.legacyCredentialsClient, host);
        expect([host, legacy.status, legacy.body]).toEqual([host, 200, expect.stringContaining('"access_token"')]);
        const current = await post(hosts.credentialsClient, host);
        expect([host, current.status, current.body]).toEqual([host, 401, expect.stringContaining(`at ${ISSUER}`)]);
      }
      const metadata = await rawRequest(server.port, 'GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: LEGACY-AUTH.TEST:80\r\nConnection: close');
      expect(JSON.parse(metadata.body).issuer).toBe(LEGACY_HOST_ISSUER);
      // Another port is another authority: not the legacy issuer's.
      expect((await post(hosts.legacyCredentialsClient, 'legacy-auth.test:8080')).status).toBe(401);
      expect((await post(hosts.credentialsClient, 'legacy-auth.test:8080')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  // RFC 9112 §3.2.2: "When an origin server receives a request with an absolute-form of request-target, the origin
  // server MUST ignore the received Host header field (if any) and instead use the host information of the
  // request-target." A proxy forwarding without rewriting the target sends this form.
  it('takes the host of an absolute-form request target over the Host header', async () => {
    const server = await listen(hosts.app);
    try {
      const post = (client: TestClient, target: string, host: string) => rawRequest(server.port, [
        `POST ${target} HTTP/1.1`, `Host: ${host}`, `Authorization: ${basic(client)}`,
        'Content-Type: application/x-www-form-urlencoded', 'Content-Length: 29', 'Connection: close',
      ].join('\r\n'), 'grant_type=client_credentials', { keepOpen: true });
      const legacy = await post(hosts.legacyCredentialsClient, 'http://legacy-auth.test/oauth2/token', 'auth.test');
      expect([legacy.status, legacy.body]).toEqual([200, expect.stringContaining('"access_token"')]);
      const current = await post(hosts.credentialsClient, 'http://legacy-auth.test/oauth2/token', 'auth.test');
      expect([current.status, current.body]).toEqual([401, expect.stringContaining(`at ${ISSUER}`)]);
      expect((await post(hosts.credentialsClient, 'http://AUTH.test:80/oauth2/token', 'legacy-auth.test')).status).toBe(200);
      // Userinfo ends at the authority's last `@`, as WHATWG URL reads it: the host is the part after it.
      expect((await post(hosts.legacyCredentialsClient, 'http://auth.test@x@legacy-auth.test/oauth2/token', 'auth.test')).status).toBe(200);
      const metadata = await rawRequest(server.port, 'GET http://legacy-auth.test/.well-known/oauth-authorization-server HTTP/1.1\r\nHost: auth.test\r\nConnection: close');
      expect(JSON.parse(metadata.body).issuer).toBe(LEGACY_HOST_ISSUER);
    } finally {
      await server.close();
    }
  });

  // RFC 9112 §3.2: "more than one Host header field line" is 400. Node keeps the first; a proxy or cache in front may
  // act on the last, and here the host picks the issuer: refused rather than resolved either way.
  it('refuses a request with two Host lines (400), at every endpoint where the host picks the issuer', async () => {
    const server = await listen(hosts.app);
    try {
      const twoHosts = 'Host: auth.test\r\nHost: legacy-auth.test\r\nConnection: close';
      const form = 'grant_type=client_credentials';
      for (const path of ['/oauth2/token', '/oauth2/revoke', '/oauth2/introspect']) {
        const res = await rawRequest(server.port, [`POST ${path} HTTP/1.1`, twoHosts, `Authorization: ${basic(hosts.credentialsClient)}`,
          'Content-Type: application/x-www-form-urlencoded', `Content-Length: ${form.length}`].join('\r\n'), form, { keepOpen: true });
        expect([path, res.status, JSON.parse(res.body)]).toEqual([path, 400, { error: 'invalid_request', error_description: 'the request carries more than one Host header' }]);
        expect(res.headers).toContainEqual(['cache-control', 'no-cache, no-store, max-age=0, must-revalidate']);
      }
      const metadata = await rawRequest(server.port, `GET /.well-known/oauth-authorization-server HTTP/1.1\r\n${twoHosts}`);
      expect([metadata.status, JSON.parse(metadata.body).error]).toEqual([400, 'invalid_request']);
      expect(metadata.headers).not.toContainEqual(['cache-control', 'private, max-age=300']);
      expect(metadata.headers).not.toContainEqual(['cache-control', 'public, max-age=300']);
      const page = await rawRequest(server.port, `GET /oauth2/authorize?${authorizeQuery(hosts.legacyCodeClient)} HTTP/1.1\r\n${twoHosts}`);
      expect(page.status).toBe(400);
      expect(page.body).toContain('The request could not be read.');
      // One Host line is answered as before.
      expect((await rawRequest(server.port, 'GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: legacy-auth.test\r\nConnection: close')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('shows a legacy integration at Host: auth.test an error page naming http://legacy-auth.test', async () => {
    const res = await request(hosts.app).get(`/oauth2/authorize?${authorizeQuery(hosts.legacyCodeClient)}`).set('Host', 'auth.test');
    expect(expectErrorPage(res)).toContain(LEGACY_HOST_ISSUER);
  });
});
