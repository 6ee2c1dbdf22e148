// RFC 6749 §2.3 client authentication: client_secret_basic and client_secret_post at token, revocation and introspection.
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import type express from 'express';
import { ISSUER, REDIRECT_URI, basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { apiStatus, clientCredentialsToken } from '../helpers/token-requests.js';
import { registerClient } from '../../src/clients/register-client.js';
import { resolveOptions, OptionsError } from '../../src/options.js';
import type { TokenEndpointAuthMethod } from '../../src/stores/contract.js';

const METHODS = ['client_secret_basic', 'client_secret_post'] as const;
const ENDPOINTS = ['token', 'revoke', 'introspect'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

/**
 * POST /oauth2/{endpoint} authenticated with `method`: the Basic header (client_id also in the body, as SPEC
 * §4.3–4.5 sends it) or `client_id` and `client_secret` form fields (RFC 6749 §2.3.1).
 */
function post(app: express.Express, endpoint: Endpoint, method: TokenEndpointAuthMethod, client: TestClient, form: Record<string, string>): request.Test {
  const req = request(app).post(`/oauth2/${endpoint}`).type('form');
  if (method === 'client_secret_basic') return req.set('Authorization', basic(client)).send({ ...form, client_id: client.clientId });
  return req.send({ ...form, client_id: client.clientId, client_secret: client.clientSecret });
}

/** The smallest valid form of each endpoint, given a live access token for the revocation and introspection ones. */
function formFor(endpoint: Endpoint, accessToken: string): Record<string, string> {
  return endpoint === 'token' ? { grant_type: 'client_credentials' } : { token: accessToken };
}

/** A client_credentials access token obtained with `method`. */
async function tokenVia(app: express.Express, method: TokenEndpointAuthMethod, client: TestClient): Promise<string> {
  const res = await post(app, 'token', method, client, { grant_type: 'client_credentials' });
  expect(res.status, res.text).toBe(200);
  return res.body.access_token as string;
}

function expectInvalidClient(res: request.Response): void {
  expect(res.status, res.text).toBe(401);
  expect(res.body.error).toBe('invalid_client');
  // RFC 9110 §15.5.2: a 401 "MUST send a WWW-Authenticate header field"; RFC 6749 §5.2: matching the Basic scheme.
  expect(res.headers['www-authenticate']).toBe(`Basic realm="${ISSUER}"`);
}

function expectInvalidRequest(res: request.Response): void {
  expect(res.status, res.text).toBe(400);
  expect(res.body.error).toBe('invalid_request');
  expect(res.headers['www-authenticate']).toBeUndefined();
}

/** What a successful call of each endpoint answers. */
function expectSuccess(endpoint: Endpoint, res: request.Response): void {
  expect(res.status, res.text).toBe(200);
  if (endpoint === 'token') expect(res.body.access_token).toEqual(expect.any(String));
  if (endpoint === 'introspect') expect(res.body.active).toBe(true);
}

describe('RFC 6749 §2.3.1: both client_secret_basic and client_secret_post are accepted by default', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });

  describe.each(METHODS)('%s', (method) => {
    it.each(ENDPOINTS)('authenticates the client at /oauth2/%s', async (endpoint) => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expectSuccess(endpoint, await post(t.app, endpoint, method, t.credentialsClient, formFor(endpoint, token)));
    });

    it('issues a client_credentials token that the API accepts', async () => {
      const res = await post(t.app, 'token', method, t.credentialsClient, { grant_type: 'client_credentials' });
      expect(res.status).toBe(200);
      expect(await apiStatus(t.app, res.body.access_token as string)).toBe(200);
    });

    it('exchanges an authorization code and refreshes, SPEC §4.3 and §4.5', async () => {
      const code = await obtainCode(t.app, t.codeClient);
      const exchanged = await post(t.app, 'token', method, t.codeClient, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
      expect(exchanged.status, exchanged.text).toBe(200);
      const refreshed = await post(t.app, 'token', method, t.codeClient, { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token as string });
      expect(refreshed.status, refreshed.text).toBe(200);
      expect(await apiStatus(t.app, refreshed.body.access_token as string)).toBe(200);
    });

    it('revocation with it takes effect (RFC 7009 §2.1)', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect((await post(t.app, 'revoke', method, t.credentialsClient, { token })).status).toBe(200);
      expect(await apiStatus(t.app, token)).toBe(401);
    });
  });

  it('accepts client_secret_post at the legacy base address for a legacy integration (SPEC §9)', async () => {
    const res = await request(t.app).post('/legacy/oauth2/token').type('form').send({
      grant_type: 'client_credentials', client_id: t.legacyCredentialsClient.clientId, client_secret: t.legacyCredentialsClient.clientSecret,
    });
    expect(res.status, res.text).toBe(200);
  });

  it('answers invalid_client naming the legacy address only once a client_secret_post secret checked out (SPEC §9)', async () => {
    const legacy = t.legacyCredentialsClient;
    const right = await post(t.app, 'token', 'client_secret_post', legacy, { grant_type: 'client_credentials' });
    expectInvalidClient(right);
    expect(right.body.error_description).toMatch(/legacy/);
    const wrong = await post(t.app, 'token', 'client_secret_post', { ...legacy, clientSecret: 'wrong' }, { grant_type: 'client_credentials' });
    expectInvalidClient(wrong);
    expect(wrong.body.error_description).not.toMatch(/legacy/);
  });
});

describe('RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request"', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });

  it.each(ENDPOINTS)('answers 400 invalid_request to Basic plus client_secret in the body at /oauth2/%s, changing nothing', async (endpoint) => {
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const res = await request(t.app).post(`/oauth2/${endpoint}`).type('form').set('Authorization', basic(t.credentialsClient))
      .send({ ...formFor(endpoint, token), client_id: t.credentialsClient.clientId, client_secret: t.credentialsClient.clientSecret });
    expectInvalidRequest(res);
    expect(await apiStatus(t.app, token)).toBe(200);
  });

  it('answers invalid_request to two methods even when one of the secrets is wrong (§5.2: "includes multiple credentials")', async () => {
    const res = await request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(t.credentialsClient))
      .send({ grant_type: 'client_credentials', client_secret: 'wrong' });
    expectInvalidRequest(res);
  });

  it('answers invalid_request to any Authorization header plus client_secret in the body', async () => {
    const res = await request(t.app).post('/oauth2/token').type('form').set('Authorization', 'Bearer something')
      .send({ grant_type: 'client_credentials', client_id: t.credentialsClient.clientId, client_secret: t.credentialsClient.clientSecret });
    expectInvalidRequest(res);
  });

  it.each(ENDPOINTS)('reads an empty Authorization header as absent at /oauth2/%s: client_secret_post is then the one method', async (endpoint) => {
    // An empty field value has no auth-scheme, so it is no credentials (RFC 9110 §11.6.2) and no second method;
    // as an empty parameter is omitted (§3.1). requireBearer already reads it as no credentials (RFC 6750 §3.1).
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const res = await post(t.app, endpoint, 'client_secret_post', t.credentialsClient, formFor(endpoint, token)).set('Authorization', '');
    expectSuccess(endpoint, res);
  });

  it('answers an empty Authorization header with nothing else like no credentials: 401 invalid_client', async () => {
    const res = await request(t.app).post('/oauth2/token').type('form').set('Authorization', '')
      .send({ grant_type: 'client_credentials', client_id: t.credentialsClient.clientId });
    expectInvalidClient(res);
    expect(res.body.error_description).toMatch(/client authentication required/);
  });

  it("keeps SPEC's form working: client_id in the body and Basic in the header is one method (SPEC §4.4, §5.1)", async () => {
    const res = await request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(t.credentialsClient))
      .send({ grant_type: 'client_credentials', client_id: t.credentialsClient.clientId });
    expect(res.status, res.text).toBe(200);
  });

  it('refuses a body client_id that differs from the Basic one with invalid_request (DESIGN §5)', async () => {
    for (const endpoint of ENDPOINTS) {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await request(t.app).post(`/oauth2/${endpoint}`).type('form').set('Authorization', basic(t.credentialsClient))
        .send({ ...formFor(endpoint, token), client_id: t.codeClient.clientId });
      expectInvalidRequest(res);
    }
  });
});

describe('RFC 6749 §5.2: a missing or failed client authentication is 401 invalid_client with WWW-Authenticate', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });

  it.each(ENDPOINTS)('answers 401 invalid_client with a Basic challenge when /oauth2/%s gets no credentials, only client_id', async (endpoint) => {
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const res = await request(t.app).post(`/oauth2/${endpoint}`).type('form').send({ ...formFor(endpoint, token), client_id: t.credentialsClient.clientId });
    expectInvalidClient(res);
    expect(await apiStatus(t.app, token)).toBe(200);
  });

  it.each(ENDPOINTS)('answers a wrong body client_secret and an unknown body client_id alike at /oauth2/%s', async (endpoint) => {
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const wrong = await post(t.app, endpoint, 'client_secret_post', { ...t.credentialsClient, clientSecret: 'wrong' }, formFor(endpoint, token));
    const unknown = await post(t.app, endpoint, 'client_secret_post', { clientId: 'no-such-client', clientSecret: 'wrong' }, formFor(endpoint, token));
    expectInvalidClient(wrong);
    expectInvalidClient(unknown);
    expect(unknown.text).toBe(wrong.text);
    expect(await apiStatus(t.app, token)).toBe(200);
  });

  it('answers the same to a wrong secret whichever method carried it', async () => {
    const wrong = { ...t.credentialsClient, clientSecret: 'wrong' };
    const viaPost = await post(t.app, 'token', 'client_secret_post', wrong, { grant_type: 'client_credentials' });
    const viaBasic = await post(t.app, 'token', 'client_secret_basic', wrong, { grant_type: 'client_credentials' });
    expect(viaPost.text).toBe(viaBasic.text);
  });

  it('answers an id no store could hold (control characters, 300 characters) like an unknown one, through the form', async () => {
    const unknown = await post(t.app, 'token', 'client_secret_post', { clientId: 'no-such-client', clientSecret: 'x' }, { grant_type: 'client_credentials' });
    for (const clientId of ['a\u0001b', 'x'.repeat(300)]) {
      const res = await post(t.app, 'token', 'client_secret_post', { clientId, clientSecret: 'x' }, { grant_type: 'client_credentials' });
      expectInvalidClient(res);
      expect(res.text).toBe(unknown.text);
    }
  });

  it('refuses a disabled integration through client_secret_post like a wrong secret', async () => {
    const { disableClient } = await import('../../src/clients/disable-client.js');
    const { client, clientSecret } = await registerClient(t.store, { name: 'Old', flow: 'client_credentials' });
    await disableClient(t.store, client.clientId);
    const res = await post(t.app, 'token', 'client_secret_post', { clientId: client.clientId, clientSecret }, { grant_type: 'client_credentials' });
    expectInvalidClient(res);
  });

  it('answers 400 invalid_request to a body client_secret without client_id (§2.3.1: client_id is REQUIRED with it)', async () => {
    for (const endpoint of ENDPOINTS) {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await request(t.app).post(`/oauth2/${endpoint}`).type('form')
        .send({ ...formFor(endpoint, token), client_secret: t.credentialsClient.clientSecret });
      expectInvalidRequest(res);
    }
  });

  it('authenticates no one with the phrase behind the hash compared when there is no client or no previous secret', async () => {
    // The constant-work comparison runs against a fixed hash; its own phrase must match nothing, known id or not.
    const phrase = 'express-oauth-router: no such client';
    for (const method of METHODS) {
      for (const clientId of ['no-such-client', t.credentialsClient.clientId]) {
        expectInvalidClient(await post(t.app, 'token', method, { ...t.credentialsClient, clientId, clientSecret: phrase }, { grant_type: 'client_credentials' }));
      }
    }
  });

  it('authenticates no one with that phrase when the secret is an imported scrypt one either (the slow comparison)', async () => {
    const { hashSecretScrypt } = await import('../../src/crypto/scrypt-secret.js');
    const { client } = await registerClient(t.store, { name: 'Imported, no previous', flow: 'client_credentials' });
    await t.store.clients.updateClient!(client.clientId, { clientSecretHash: await hashSecretScrypt('imported-only') });
    const as = (clientSecret: string) => post(t.app, 'token', 'client_secret_basic', { ...t.credentialsClient, clientId: client.clientId, clientSecret }, { grant_type: 'client_credentials' });
    expect((await as('imported-only')).status).toBe(200);
    expectInvalidClient(await as('express-oauth-router: no such client'));
  });

  it('checks an imported scrypt secret next to a generated previous one in its grace period, each against its own hash', async () => {
    const { hashSecretScrypt } = await import('../../src/crypto/scrypt-secret.js');
    const { hashSecret } = await import('../../src/crypto/hash-secret.js');
    const { client } = await registerClient(t.store, { name: 'Imported', flow: 'client_credentials' });
    await t.store.clients.updateClient!(client.clientId, {
      clientSecretHash: await hashSecretScrypt('imported-current'),
      previousClientSecretHash: hashSecret('generated-previous'),
      previousClientSecretExpiresAt: new Date(Date.now() + 3_600_000),
    });
    const as = (clientSecret: string) => post(t.app, 'token', 'client_secret_basic', { ...t.credentialsClient, clientId: client.clientId, clientSecret }, { grant_type: 'client_credentials' });
    expect((await as('imported-current')).status).toBe(200);
    expect((await as('generated-previous')).status).toBe(200);
    expectInvalidClient(await as('something-else'));
  });

  it('treats an empty client_secret as omitted (§3.1), so the request carries no credentials', async () => {
    const res = await request(t.app).post('/oauth2/token').type('form')
      .send(`grant_type=client_credentials&client_id=${encodeURIComponent(t.credentialsClient.clientId)}&client_secret=`);
    expectInvalidClient(res);
  });
});

describe('the clientAuthMethods option narrows the methods, in the metadata too (RFC 8414 §2)', () => {
  describe.each([
    { allowed: 'client_secret_basic', refused: 'client_secret_post' },
    { allowed: 'client_secret_post', refused: 'client_secret_basic' },
  ] as const)('clientAuthMethods: [$allowed]', ({ allowed, refused }) => {
    let t: TestApp;
    beforeAll(async () => { t = await createTestApp({ clientAuthMethods: [allowed] }); });

    it.each(ENDPOINTS)(`accepts ${allowed} and answers ${refused} with 401 invalid_client at /oauth2/%s`, async (endpoint) => {
      const token = await tokenVia(t.app, allowed, t.credentialsClient);
      expectInvalidClient(await post(t.app, endpoint, refused, t.credentialsClient, formFor(endpoint, token)));
      expect(await apiStatus(t.app, token)).toBe(200);
      expectSuccess(endpoint, await post(t.app, endpoint, allowed, t.credentialsClient, formFor(endpoint, token)));
    });

    it('lists only that method at token, revocation and introspection, at both base addresses', async () => {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/legacy']) {
        const { body } = await request(t.app).get(path);
        expect(body.token_endpoint_auth_methods_supported).toEqual([allowed]);
        expect(body.revocation_endpoint_auth_methods_supported).toEqual([allowed]);
        expect(body.introspection_endpoint_auth_methods_supported).toEqual([allowed]);
      }
    });
  });

  it('still answers two methods at once with invalid_request, whatever is allowed', async () => {
    const t = await createTestApp({ clientAuthMethods: ['client_secret_basic'] });
    const res = await request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(t.credentialsClient))
      .send({ grant_type: 'client_credentials', client_secret: t.credentialsClient.clientSecret });
    expectInvalidRequest(res);
  });

  it('keeps the metadata order and drops repeats', () => {
    const resolved = resolveOptions({ issuer: ISSUER, clientAuthMethods: ['client_secret_post', 'client_secret_basic', 'client_secret_post'] });
    expect(resolved.clientAuthMethods).toEqual(['client_secret_basic', 'client_secret_post']);
    expect(resolveOptions({ issuer: ISSUER }).clientAuthMethods).toEqual(['client_secret_basic', 'client_secret_post']);
  });

  it.each([
    ['an empty list, which would lock every client out', []],
    ['an unknown method name', ['private_key_jwt']],
    ['"none" (public clients are not supported)', ['none']],
    ['a string instead of a list', 'client_secret_post'],
  ])('refuses %s at start-up, naming the option', (_name, value) => {
    expect(() => resolveOptions({ issuer: ISSUER, clientAuthMethods: value as never })).toThrow(OptionsError);
    expect(() => resolveOptions({ issuer: ISSUER, clientAuthMethods: value as never })).toThrow(/"clientAuthMethods"/);
  });
});

describe('an integration restricted to one method (RFC 7591 §2 token_endpoint_auth_method)', () => {
  let t: TestApp;
  const restricted = new Map<TokenEndpointAuthMethod, TestClient>();
  beforeAll(async () => {
    t = await createTestApp();
    for (const method of METHODS) {
      const { client, clientSecret } = await registerClient(t.store, { name: `Only ${method}`, flow: 'client_credentials', tokenEndpointAuthMethod: method });
      restricted.set(method, { clientId: client.clientId, clientSecret });
    }
  });

  describe.each([
    { only: 'client_secret_basic', other: 'client_secret_post' },
    { only: 'client_secret_post', other: 'client_secret_basic' },
  ] as const)('registered with $only', ({ only, other }) => {
    it.each(ENDPOINTS)(`authenticates with ${only} and answers ${other} with 401 invalid_client at /oauth2/%s`, async (endpoint) => {
      const client = restricted.get(only)!;
      const token = await tokenVia(t.app, only, client);
      const refused = await post(t.app, endpoint, other, client, formFor(endpoint, token));
      expectInvalidClient(refused);
      expect(refused.body.error_description).toContain(only);
      expect(await apiStatus(t.app, token)).toBe(200);
      expectSuccess(endpoint, await post(t.app, endpoint, only, client, formFor(endpoint, token)));
    });

    it(`reveals the restriction to ${other} only with the right secret: a wrong one reads as an unknown client`, async () => {
      const client = restricted.get(only)!;
      const wrong = await post(t.app, 'token', other, { ...client, clientSecret: 'wrong' }, { grant_type: 'client_credentials' });
      const unknown = await post(t.app, 'token', other, { clientId: 'no-such-client', clientSecret: 'wrong' }, { grant_type: 'client_credentials' });
      expectInvalidClient(wrong);
      expect(wrong.text).toBe(unknown.text);
    });
  });

  it('lifting the restriction (updateClient with null) lets every method the server allows in again', async () => {
    const { client, clientSecret } = await registerClient(t.store, { name: 'Lifted', flow: 'client_credentials', tokenEndpointAuthMethod: 'client_secret_basic' });
    const credentials = { clientId: client.clientId, clientSecret };
    expectInvalidClient(await post(t.app, 'token', 'client_secret_post', credentials, { grant_type: 'client_credentials' }));
    await t.store.clients.updateClient!(client.clientId, { tokenEndpointAuthMethod: null });
    for (const method of METHODS) {
      expect((await post(t.app, 'token', method, credentials, { grant_type: 'client_credentials' })).status).toBe(200);
    }
  });

  it('an integration restricted to a method the server refuses cannot authenticate at all', async () => {
    const narrowed = await createTestApp({ clientAuthMethods: ['client_secret_basic'] });
    const { client, clientSecret } = await registerClient(narrowed.store, { name: 'Mismatch', flow: 'client_credentials', tokenEndpointAuthMethod: 'client_secret_post' });
    for (const method of METHODS) {
      expectInvalidClient(await post(narrowed.app, 'token', method, { clientId: client.clientId, clientSecret }, { grant_type: 'client_credentials' }));
    }
  });

  it('registerClient refuses a method name it does not know', async () => {
    await expect(registerClient(t.store, { name: 'Bad', flow: 'client_credentials', tokenEndpointAuthMethod: 'private_key_jwt' as never }))
      .rejects.toThrow(TypeError);
  });

  it('registerClient stores no method unless one is given', async () => {
    const { client } = await registerClient(t.store, { name: 'Any', flow: 'client_credentials' });
    expect(client).not.toHaveProperty('tokenEndpointAuthMethod');
    expect(await t.store.clients.findClient(client.clientId)).not.toHaveProperty('tokenEndpointAuthMethod');
  });
});
