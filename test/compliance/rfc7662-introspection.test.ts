// RFC 7662 token introspection at POST {issuer}/oauth2/introspect, client-authenticated with Basic like SPEC §4.2.
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ISSUER, LEGACY_ISSUER, USER, basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { clientCredentialsToken, codeTokens, introspect, revoke } from '../helpers/token-requests.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';

const INACTIVE = '{"active":false}';
const now = () => Math.floor(Date.now() / 1000);

describe('RFC 7662 token introspection', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });

  describe('active tokens of the calling client (§2.2)', () => {
    it('describes a client_credentials access token: active, scope, client_id, token_type Bearer, exp, iss, and no sub', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const before = now();
      const res = await introspect(t.app, t.credentialsClient, { token });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['active', 'client_id', 'exp', 'iss', 'scope', 'token_type']);
      expect(res.body).toMatchObject({
        active: true, scope: 'envelopes:read envelopes:sign', client_id: t.credentialsClient.clientId, token_type: 'Bearer', iss: ISSUER,
      });
      expect(res.body).not.toHaveProperty('sub');
      expect(res.body.exp).toBeGreaterThanOrEqual(before + 3600 - 5);
      expect(res.body.exp).toBeLessThanOrEqual(now() + 3601);
    });

    it('describes a user access token with sub, the user who granted it', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      const res = await introspect(t.app, t.codeClient, { token: tokens.accessToken, token_type_hint: 'access_token' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ active: true, client_id: t.codeClient.clientId, token_type: 'Bearer', sub: USER.id, iss: ISSUER });
      expect(Object.keys(res.body).sort()).toEqual(['active', 'client_id', 'exp', 'iss', 'scope', 'sub', 'token_type']);
    });

    it('reports a narrowed scope as the space-separated list the token carries (§2.2 scope)', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient, '', 'envelopes:read');
      const res = await introspect(t.app, t.credentialsClient, { token });
      expect(res.body.active).toBe(true);
      expect(res.body.scope).toBe('envelopes:read');
    });

    it('describes a refresh token without token_type (§2.2: a type of RFC 6749 §5.1, which types access tokens), with token_use refresh_token and its own, longer expiry', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      const res = await introspect(t.app, t.codeClient, { token: tokens.refreshToken, token_type_hint: 'refresh_token' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ active: true, client_id: t.codeClient.clientId, token_use: 'refresh_token', sub: USER.id, iss: ISSUER });
      expect(res.body).not.toHaveProperty('token_type');
      expect(res.body.exp).toBeGreaterThanOrEqual(now() + 30 * 24 * 3600 - 10);
    });

    it('extends the search past a wrong hint (§2.1): an access token with hint refresh_token, a refresh token with hint access_token', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      const access = await introspect(t.app, t.codeClient, { token: tokens.accessToken, token_type_hint: 'refresh_token' });
      expect(access.body).toMatchObject({ active: true, token_type: 'Bearer' });
      const refresh = await introspect(t.app, t.codeClient, { token: tokens.refreshToken, token_type_hint: 'access_token' });
      expect(refresh.body).toMatchObject({ active: true, token_use: 'refresh_token' });
      expect(refresh.body).not.toHaveProperty('token_type');
    });

    it('reports the legacy issuer as iss for a legacy client\'s token introspected at the legacy address', async () => {
      const token = await clientCredentialsToken(t.app, t.legacyCredentialsClient, '/legacy');
      const res = await introspect(t.app, t.legacyCredentialsClient, { token }, '/legacy');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ active: true, client_id: t.legacyCredentialsClient.clientId, iss: LEGACY_ISSUER });
    });

    it('marks its answers as not cacheable (§4: Cache-Control no-store) and sends JSON', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      for (const form of [{ token }, { token: 'unknown-token' }]) {
        const res = await introspect(t.app, t.credentialsClient, form);
        expect(res.headers['cache-control']).toContain('no-store');
        expect(res.headers.pragma).toBe('no-cache');
        expect(res.headers['content-type']).toBe('application/json;charset=UTF-8');
      }
    });
  });

  describe('inactive tokens are exactly {"active":false} (§2.2: no additional information)', () => {
    it('for an unknown token', async () => {
      const res = await introspect(t.app, t.credentialsClient, { token: 'no-such-token-0123456789' });
      expect(res.status).toBe(200);
      expect(res.text).toBe(INACTIVE);
    });

    it('for an expired access token', async () => {
      // accessTokenTtl 1, its expiry rounded up to a whole second: it lives 1 to 2 s.
      const short = await createTestApp({ accessTokenTtl: 1 });
      const token = await clientCredentialsToken(short.app, short.credentialsClient);
      expect((await introspect(short.app, short.credentialsClient, { token })).body.active).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const res = await introspect(short.app, short.credentialsClient, { token });
      expect(res.status).toBe(200);
      expect(res.text).toBe(INACTIVE);
    });

    it('for a revoked access token', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect((await revoke(t.app, t.credentialsClient, { token })).status).toBe(200);
      expect((await introspect(t.app, t.credentialsClient, { token })).text).toBe(INACTIVE);
    });

    it('for the refresh token and the access token of a revoked grant', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken })).status).toBe(200);
      expect((await introspect(t.app, t.codeClient, { token: tokens.refreshToken })).text).toBe(INACTIVE);
      expect((await introspect(t.app, t.codeClient, { token: tokens.accessToken })).text).toBe(INACTIVE);
    });

    it('for an access token of another client', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await introspect(t.app, t.codeClient, { token });
      expect(res.status).toBe(200);
      expect(res.text).toBe(INACTIVE);
    });

    it('for a refresh token of another client', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      expect((await introspect(t.app, t.credentialsClient, { token: tokens.refreshToken })).text).toBe(INACTIVE);
    });

    it('and introspection never changes the token: another client\'s probe leaves it active', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      await introspect(t.app, t.codeClient, { token });
      expect((await introspect(t.app, t.credentialsClient, { token })).body.active).toBe(true);
    });
  });

  describe('resource servers named in introspectionClients may introspect any token (§2.1)', () => {
    let rs: TestApp;
    let resourceServer: TestClient;
    beforeAll(async () => {
      const store = createMemoryStore();
      const registered = await registerClient(store, { name: 'Signature API resource server', flow: 'client_credentials', allowedScopes: [] });
      resourceServer = { clientId: registered.client.clientId, clientSecret: registered.clientSecret };
      rs = await createTestApp({ introspectionClients: [resourceServer.clientId] }, store);
    });

    it('sees another client\'s client_credentials token as active, with that client\'s client_id', async () => {
      const token = await clientCredentialsToken(rs.app, rs.credentialsClient);
      const res = await introspect(rs.app, resourceServer, { token });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ active: true, client_id: rs.credentialsClient.clientId, token_type: 'Bearer', iss: ISSUER });
      expect(res.body).not.toHaveProperty('sub');
    });

    it('sees another client\'s user token with its sub', async () => {
      const tokens = await codeTokens(rs.app, rs.codeClient);
      const res = await introspect(rs.app, resourceServer, { token: tokens.accessToken });
      expect(res.body).toMatchObject({ active: true, client_id: rs.codeClient.clientId, sub: USER.id });
    });

    it('sees a legacy-issued token with the legacy iss', async () => {
      const token = await clientCredentialsToken(rs.app, rs.legacyCredentialsClient, '/legacy');
      const res = await introspect(rs.app, resourceServer, { token });
      expect(res.body).toMatchObject({ active: true, client_id: rs.legacyCredentialsClient.clientId, iss: LEGACY_ISSUER });
    });

    it('still gets exactly {"active":false} for unknown and revoked tokens', async () => {
      const token = await clientCredentialsToken(rs.app, rs.credentialsClient);
      await revoke(rs.app, rs.credentialsClient, { token });
      expect((await introspect(rs.app, resourceServer, { token })).text).toBe(INACTIVE);
      expect((await introspect(rs.app, resourceServer, { token: 'unknown' })).text).toBe(INACTIVE);
    });

    it('gives the privilege only to the listed client: other clients still see {"active":false}', async () => {
      const token = await clientCredentialsToken(rs.app, rs.credentialsClient);
      expect((await introspect(rs.app, rs.codeClient, { token })).text).toBe(INACTIVE);
    });

    it('does not let a resource server revoke another client\'s token (introspection is not revocation)', async () => {
      const token = await clientCredentialsToken(rs.app, rs.credentialsClient);
      expect((await revoke(rs.app, resourceServer, { token })).status).toBe(400);
      expect((await introspect(rs.app, resourceServer, { token })).body.active).toBe(true);
    });
  });

  describe('refused requests (§2.1, §2.3)', () => {
    it('answers 400 invalid_request when the token parameter is missing', async () => {
      for (const form of [{}, { token: '' }, { token_type_hint: 'access_token' }]) {
        const res = await introspect(t.app, t.credentialsClient, form);
        expect(res.status, JSON.stringify(form)).toBe(400);
        expect(res.body.error).toBe('invalid_request');
      }
    });

    const authFailures: ReadonlyArray<[string, (app: TestApp) => string | null]> = [
      ['no Authorization header', () => null],
      ['a wrong secret', (app) => basic({ clientId: app.credentialsClient.clientId, clientSecret: 'wrong-secret' })],
      ['an unknown client_id', () => basic({ clientId: 'no-such-client', clientSecret: 'whatever' })],
      ['a Bearer header instead of Basic (the token introspecting itself)', () => 'Bearer some-token'],
    ];
    it.each(authFailures)('answers 401 invalid_client with WWW-Authenticate: Basic for %s, telling nothing about the token', async (_name, auth) => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await introspect(t.app, auth(t), { token });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.body).not.toHaveProperty('active');
      expect(res.headers['www-authenticate']).toBe(`Basic realm="${ISSUER}"`);
    });

    it('does not accept the token itself as a bearer credential for introspection', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await introspect(t.app, `Bearer ${token}`, { token });
      expect(res.status).toBe(401);
      expect(res.body).not.toHaveProperty('active');
    });

    it.each(['GET', 'PUT', 'DELETE'] as const)('answers 405 with Allow: POST to %s', async (method) => {
      const res = await request(t.app)[method.toLowerCase() as 'get' | 'put' | 'delete']('/oauth2/introspect').set('Authorization', basic(t.credentialsClient));
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
    });

    it('answers invalid_client naming the legacy address to a legacy client at the main address (SPEC §9)', async () => {
      const token = await clientCredentialsToken(t.app, t.legacyCredentialsClient, '/legacy');
      const res = await introspect(t.app, t.legacyCredentialsClient, { token });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.body.error_description).toContain(LEGACY_ISSUER);
      expect(res.body).not.toHaveProperty('active');
    });

    it('answers invalid_client naming the main address to a main client at the legacy address', async () => {
      const res = await introspect(t.app, t.credentialsClient, { token: 'x' }, '/legacy');
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.body.error_description).toContain(`at ${ISSUER}`);
    });
  });
});
