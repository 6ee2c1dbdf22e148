// RFC 7009 token revocation at POST {issuer}/oauth2/revoke, client-authenticated with Basic like SPEC §4.2.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { LEGACY_ISSUER, ISSUER, basic, createTestApp, type TestApp } from '../helpers/app.js';
import { apiStatus, clientCredentialsToken, codeTokens, refresh, revoke } from '../helpers/token-requests.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import type { Store } from '../../src/stores/contract.js';

describe('RFC 7009 token revocation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });

  describe('successful revocation (§2.1, §2.2)', () => {
    it('answers 200 with a no-store JSON body', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await revoke(t.app, t.credentialsClient, { token });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json;charset=UTF-8');
      expect(res.headers['cache-control']).toContain('no-store');
    });

    it('revoking an access token makes requireBearer answer 401 invalid_token', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect(await apiStatus(t.app, token)).toBe(200);
      expect((await revoke(t.app, t.credentialsClient, { token, token_type_hint: 'access_token' })).status).toBe(200);
      const res = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
    });

    it('revoking a user access token revokes just that token: the refresh token of its grant still works', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      expect((await revoke(t.app, t.codeClient, { token: tokens.accessToken })).status).toBe(200);
      expect(await apiStatus(t.app, tokens.accessToken)).toBe(401);
      const refreshed = await refresh(t.app, t.codeClient, tokens.refreshToken);
      expect(refreshed.status).toBe(200);
      expect(await apiStatus(t.app, refreshed.body.access_token as string)).toBe(200);
    });

    it('revoking a refresh token revokes the grant: the refresh fails with invalid_grant', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken, token_type_hint: 'refresh_token' })).status).toBe(200);
      const res = await refresh(t.app, t.codeClient, tokens.refreshToken);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    });

    it('revoking a refresh token also kills every access token of its grant (§2.1 SHOULD)', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      const refreshed = await refresh(t.app, t.codeClient, tokens.refreshToken);
      expect(refreshed.status).toBe(200);
      const second = refreshed.body.access_token as string;
      expect(await apiStatus(t.app, tokens.accessToken)).toBe(200);
      expect(await apiStatus(t.app, second)).toBe(200);
      expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken })).status).toBe(200);
      expect(await apiStatus(t.app, tokens.accessToken)).toBe(401);
      expect(await apiStatus(t.app, second)).toBe(401);
    });

    it('revoking a grant leaves the other grants of the same client and user alone', async () => {
      const revoked = await codeTokens(t.app, t.codeClient);
      const kept = await codeTokens(t.app, t.codeClient);
      expect((await revoke(t.app, t.codeClient, { token: revoked.refreshToken })).status).toBe(200);
      expect(await apiStatus(t.app, kept.accessToken)).toBe(200);
      expect((await refresh(t.app, t.codeClient, kept.refreshToken)).status).toBe(200);
    });

    it('answers 200 for an unknown token ("invalid tokens do not cause an error response", §2.2)', async () => {
      const res = await revoke(t.app, t.credentialsClient, { token: 'no-such-token-0123456789' });
      expect(res.status).toBe(200);
    });

    it('answers 200 when the same token is revoked twice', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken })).status).toBe(200);
      expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken })).status).toBe(200);
      expect((await revoke(t.app, t.codeClient, { token: tokens.accessToken })).status).toBe(200);
      expect((await revoke(t.app, t.codeClient, { token: tokens.accessToken })).status).toBe(200);
    });

    it('extends the search past a wrong hint: an access token sent with token_type_hint=refresh_token is revoked (§2.1)', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect((await revoke(t.app, t.credentialsClient, { token, token_type_hint: 'refresh_token' })).status).toBe(200);
      expect(await apiStatus(t.app, token)).toBe(401);
    });

    it('extends the search past a wrong hint: a refresh token sent with token_type_hint=access_token revokes its grant (§2.1)', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken, token_type_hint: 'access_token' })).status).toBe(200);
      expect((await refresh(t.app, t.codeClient, tokens.refreshToken)).body.error).toBe('invalid_grant');
      expect(await apiStatus(t.app, tokens.accessToken)).toBe(401);
    });

    it('ignores an unknown token_type_hint value and still revokes (§2.1: the server "MAY ignore" the hint)', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect((await revoke(t.app, t.credentialsClient, { token, token_type_hint: 'id_token' })).status).toBe(200);
      expect(await apiStatus(t.app, token)).toBe(401);
    });

    it('accepts a client_id form field equal to the authenticated client', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect((await revoke(t.app, t.credentialsClient, { token, client_id: t.credentialsClient.clientId })).status).toBe(200);
      expect(await apiStatus(t.app, token)).toBe(401);
    });

    it('revokes a legacy client\'s token at the legacy address (SPEC §9)', async () => {
      const tokens = await codeTokens(t.app, t.legacyCodeClient, '/legacy');
      expect((await revoke(t.app, t.legacyCodeClient, { token: tokens.refreshToken }, '/legacy')).status).toBe(200);
      expect(await apiStatus(t.app, tokens.accessToken)).toBe(401);
      expect((await refresh(t.app, t.legacyCodeClient, tokens.refreshToken, '/legacy')).body.error).toBe('invalid_grant');
    });
  });

  describe('refused requests', () => {
    it('refuses to revoke an access token of another client: 400 invalid_request, and the token still works (§2.1)', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await revoke(t.app, t.codeClient, { token });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(await apiStatus(t.app, token)).toBe(200);
    });

    it('refuses to revoke a refresh token of another client: 400 invalid_request, and the grant still works', async () => {
      const tokens = await codeTokens(t.app, t.codeClient);
      const res = await revoke(t.app, t.credentialsClient, { token: tokens.refreshToken, token_type_hint: 'refresh_token' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(await apiStatus(t.app, tokens.accessToken)).toBe(200);
      expect((await refresh(t.app, t.codeClient, tokens.refreshToken)).status).toBe(200);
    });

    it('answers 400 invalid_request when the token parameter is missing (§2.1: token is REQUIRED)', async () => {
      for (const form of [{}, { token: '' }, { token_type_hint: 'access_token' }]) {
        const res = await revoke(t.app, t.credentialsClient, form);
        expect(res.status, JSON.stringify(form)).toBe(400);
        expect(res.body.error).toBe('invalid_request');
      }
    });

    it('answers 400 invalid_request when token is repeated (RFC 6749 §3.1), revoking neither', async () => {
      const a = await clientCredentialsToken(t.app, t.credentialsClient);
      const b = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await request(t.app).post('/oauth2/revoke').set('Authorization', basic(t.credentialsClient)).type('form')
        .send(`token=${a}&token=${b}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(await apiStatus(t.app, a)).toBe(200);
      expect(await apiStatus(t.app, b)).toBe(200);
    });

    it('answers 400 invalid_request for a body that is not form-encoded', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await request(t.app).post('/oauth2/revoke').set('Authorization', basic(t.credentialsClient))
        .set('Content-Type', 'application/json').send(JSON.stringify({ token }));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(await apiStatus(t.app, token)).toBe(200);
    });

    const authFailures: ReadonlyArray<[string, (app: TestApp) => string | null]> = [
      ['no Authorization header', () => null],
      ['a wrong secret', (app) => basic({ clientId: app.credentialsClient.clientId, clientSecret: 'wrong-secret' })],
      ['an unknown client_id', () => basic({ clientId: 'no-such-client', clientSecret: 'whatever' })],
      ['a Bearer header instead of Basic', () => 'Bearer some-token'],
      ['malformed Basic credentials', () => 'Basic !!!'],
    ];
    it.each(authFailures)('answers 401 invalid_client with WWW-Authenticate: Basic for %s (§2.1, RFC 6749 §5.2), revoking nothing', async (_name, auth) => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await revoke(t.app, auth(t), { token });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toBe(`Basic realm="${ISSUER}"`);
      expect(await apiStatus(t.app, token)).toBe(200);
    });

    it('refuses a client_secret in the body next to the Authorization header (RFC 6749 §2.3: one method per request), revoking nothing', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await revoke(t.app, t.credentialsClient, { token, client_id: t.credentialsClient.clientId, client_secret: t.credentialsClient.clientSecret });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(await apiStatus(t.app, token)).toBe(200);
    });

    it.each(['GET', 'PUT', 'DELETE'] as const)('answers 405 with Allow: POST to %s', async (method) => {
      const res = await request(t.app)[method.toLowerCase() as 'get' | 'put' | 'delete']('/oauth2/revoke').set('Authorization', basic(t.credentialsClient));
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.body.error).toBe('invalid_request');
    });

    it('answers invalid_client naming the legacy address to a legacy client at the main address, revoking nothing (SPEC §9)', async () => {
      const token = await clientCredentialsToken(t.app, t.legacyCredentialsClient, '/legacy');
      const res = await revoke(t.app, t.legacyCredentialsClient, { token });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.body.error_description).toContain(LEGACY_ISSUER);
      expect(await apiStatus(t.app, token)).toBe(200);
    });

    it('answers invalid_client naming the main address to a main client at the legacy address (SPEC §9)', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await revoke(t.app, t.credentialsClient, { token }, '/legacy');
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.body.error_description).toContain(`at ${ISSUER}`);
      expect(res.body.error_description).not.toContain(LEGACY_ISSUER);
      expect(await apiStatus(t.app, token)).toBe(200);
    });

    it('does not name the right address when the secret is wrong', async () => {
      const res = await revoke(t.app, { clientId: t.legacyCredentialsClient.clientId, clientSecret: 'wrong' }, { token: 'x' });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(JSON.stringify(res.body)).not.toContain(LEGACY_ISSUER);
    });
  });

  describe('revocation racing concurrent refreshes: afterwards no access token of the grant works', () => {
    const dirs: string[] = [];
    afterAll(() => {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });
    const stores: ReadonlyArray<[string, () => Store]> = [
      ['memory store', () => createMemoryStore()],
      ['SQLite store', () => {
        const dir = mkdtempSync(join(tmpdir(), 'oauth-revoke-race-'));
        dirs.push(dir);
        return createSqliteStore({ filename: join(dir, 'oauth.sqlite') });
      }],
    ];

    it.each(stores)('%s: revoke the refresh token while 10 refreshes run', async (_name, createStore) => {
      const store = createStore();
      // Widen the window between a refresh reading its refresh token and saving the new access token, so that
      // the revocation lands inside it: the save must then be refused (or undone), never survive.
      const slowed: Store = {
        ...store,
        tokens: {
          ...store.tokens,
          findRefreshToken: async (hash) => {
            const found = await store.tokens.findRefreshToken(hash);
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
            return found;
          },
        },
      };
      const app = await createTestApp({}, slowed);
      const server: Server = await new Promise((resolve) => {
        const s = app.app.listen(0, '127.0.0.1', () => resolve(s));
      });
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const post = (path: string, form: Record<string, string>) => fetch(`${base}${path}`, {
        method: 'POST',
        headers: { Authorization: basic(app.codeClient), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      });
      try {
        for (let round = 0; round < 5; round++) {
          const tokens = await codeTokens(app.app, app.codeClient);
          const refreshes = Array.from({ length: 10 }, () => post('/oauth2/token', { grant_type: 'refresh_token', refresh_token: tokens.refreshToken }));
          // The revocation is sent while the refreshes are in flight, on its own connection.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
          const revocation = post('/oauth2/revoke', { token: tokens.refreshToken, token_type_hint: 'refresh_token' });
          const [revoked, ...answers] = await Promise.all([revocation, ...refreshes]);
          expect(revoked!.status).toBe(200);
          const issued: string[] = [tokens.accessToken];
          for (const answer of answers) {
            const body = await answer.json() as Record<string, unknown>;
            // Each refresh either won the race (200) or lost it (invalid_grant); nothing else, never a 5xx.
            if (answer.status === 200) issued.push(body.access_token as string);
            else expect([answer.status, body.error]).toEqual([400, 'invalid_grant']);
          }
          for (const token of issued) expect(await apiStatus(app.app, token), `round ${round}`).toBe(401);
          const after = await post('/oauth2/token', { grant_type: 'refresh_token', refresh_token: tokens.refreshToken });
          expect(after.status).toBe(400);
          expect(((await after.json()) as { error: string }).error).toBe('invalid_grant');
        }
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await store.close?.();
      }
    });
  });
});
