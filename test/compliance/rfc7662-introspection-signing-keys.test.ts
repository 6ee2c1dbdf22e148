// RFC 7662 §2.2 with RFC 9068 §4: a JWT access token whose signing key no longer verifies is inactive, as requireBearer refuses it.
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import express from 'express';
import { createTestApp, createTestRouter, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken, codeTokens, introspect, revoke } from '../helpers/token-requests.js';
import { callApi } from '../helpers/jwt.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { Store } from '../../src/stores/contract.js';
import type { OAuthRouter } from '../../src/types.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { builtInStores, withOpenedStore } from '../helpers/built-in-stores.js';

const JWT = { accessTokenFormat: 'jwt' } as const;
const HOUR = 3600;
const YEAR = 365 * 86_400;

interface Instance {
  readonly oauth: OAuthRouter;
  readonly app: express.Express;
}

/** Another instance of the same deployment on `store`, as a restart or a second process starts it. */
function instance(store: Store, options: Parameters<typeof createTestRouter>[1] = { ...JWT, accessTokenTtl: HOUR }): Instance {
  const oauth = createTestRouter(store, options);
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
  return { oauth, app };
}

/** The introspection answer's exact text: an inactive one is `{"active":false}` and nothing more (§2.2). */
async function introspected(app: express.Express, t: TestApp, token: string, client = t.credentialsClient): Promise<string> {
  const res = await introspect(app, client, { token });
  expect(res.status).toBe(200);
  return res.text;
}

afterEach(() => { vi.useRealTimers(); });

// OAUTH_TEST_REDIS_PREFIX: a run that shares its Redis with others keeps its keys under a prefix of its own.
const STORES = builtInStores('introspect_keys', {}, { redisPrefix: process.env.OAUTH_TEST_REDIS_PREFIX ?? '' });

describe.each(STORES)('RFC 7662 §2.2, RFC 9068 §4 on the %s store: a token of a key replaced as leaked', (_label, available, open) => {
  it.skipIf(!available)('is inactive at introspection, as requireBearer refuses it; a token of the new key, and a refresh token, are active', async () => {
    await withOpenedStore(open, async ({ store }) => {
      const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
      const a = instance(store);
      const before = await clientCredentialsToken(a.app, t.credentialsClient);
      const grant = await codeTokens(a.app, t.codeClient);
      expect(JSON.parse(await introspected(a.app, t, before))).toMatchObject({ active: true });
      await a.oauth.rotateSigningKey({ leaked: true });
      expect((await callApi(a.app, before)).status).toBe(401);
      // Its record is still in the store (a genuine token): the key it was signed with is what no longer holds.
      expect(await store.tokens.findAccessToken(hashToken(before))).not.toBeNull();
      expect(await introspected(a.app, t, before)).toBe('{"active":false}');
      expect(await introspected(a.app, t, grant.accessToken, t.codeClient)).toBe('{"active":false}');
      // Refresh tokens are not signed: they stay active, and get the client a token of the new key.
      expect(JSON.parse(await introspected(a.app, t, grant.refreshToken, t.codeClient))).toMatchObject({ active: true, token_use: 'refresh_token' });
      const after = await clientCredentialsToken(a.app, t.credentialsClient);
      expect((await callApi(a.app, after)).status).toBe(200);
      expect(JSON.parse(await introspected(a.app, t, after))).toMatchObject({ active: true, token_type: 'Bearer' });
    });
  });

  it.skipIf(!available)('is inactive at an instance started after the replacement, which has not read the keys before', async () => {
    await withOpenedStore(open, async ({ store }) => {
      const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
      const a = instance(store);
      const before = await clientCredentialsToken(a.app, t.credentialsClient);
      await a.oauth.rotateSigningKey({ leaked: true });
      const b = instance(store);
      expect(await introspected(b.app, t, before)).toBe('{"active":false}');
      expect((await callApi(b.app, before)).status).toBe(401);
    });
  });

  it.skipIf(!available)('is still revoked by its record at the revocation endpoint (RFC 7009 §2.2: 200), and stays inactive', async () => {
    await withOpenedStore(open, async ({ store }) => {
      const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
      const a = instance(store);
      const before = await clientCredentialsToken(a.app, t.credentialsClient);
      await a.oauth.rotateSigningKey({ leaked: true });
      const revoked: unknown[] = [];
      a.oauth.events.on('event', (event) => { if (event.type === 'token.revoked') revoked.push(event); });
      const res = await revoke(a.app, t.credentialsClient, { token: before });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
      expect(revoked).toEqual([expect.objectContaining({ extent: 'token', clientId: t.credentialsClient.clientId })]);
      expect(await store.tokens.findAccessToken(hashToken(before))).toBeNull();
      expect(await introspected(a.app, t, before)).toBe('{"active":false}');
    });
  });
});

describe('RFC 7662 §2.2, RFC 9068 §4: other keys that no longer verify', () => {
  it('a key retired before its tokens\' exp (accessTokenTtl lowered since): its token is inactive where requireBearer refuses it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp({ ...JWT, accessTokenTtl: YEAR }, store);
    const old = await clientCredentialsToken(t.app, t.credentialsClient);
    const short = instance(store);
    await short.oauth.rotateSigningKey();
    vi.setSystemTime(Date.now() + 2 * HOUR * 1000);
    const later = instance(store);
    expect((await callApi(later.app, old)).status).toBe(401);
    expect(await store.tokens.findAccessToken(hashToken(old))).not.toBeNull();
    expect(await introspected(later.app, t, old)).toBe('{"active":false}');
  });

  it('a host key dropped from jwt.signingKeys: its token is inactive; the key that replaced it verifies', async () => {
    const [first, second] = [0, 1].map(() => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp({ ...JWT, jwt: { signingKeys: [first!] } }, store);
    const old = await clientCredentialsToken(t.app, t.credentialsClient);
    const restarted = instance(store, { ...JWT, jwt: { signingKeys: [second!] } });
    const fresh = await clientCredentialsToken(restarted.app, t.credentialsClient);
    expect((await callApi(restarted.app, old)).status).toBe(401);
    expect(await introspected(restarted.app, t, old)).toBe('{"active":false}');
    expect(JSON.parse(await introspected(restarted.app, t, fresh))).toMatchObject({ active: true });
  });

  it('an opaque token issued before the switch to JWTs stays active, and reading it asks nothing of the keys', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    let lists = 0;
    const store: Store = { ...base, keys: { ...base.keys!, listSigningKeys: () => { lists += 1; return base.keys!.listSigningKeys(); } } };
    const t = await createTestApp({}, store);
    const opaque = await clientCredentialsToken(t.app, t.credentialsClient);
    const switched = instance(store);
    expect(JSON.parse(await introspected(switched.app, t, opaque))).toMatchObject({ active: true, token_type: 'Bearer' });
    expect(lists).toBe(0);
    expect((await callApi(switched.app, opaque)).status).toBe(200);
  });

  it('a token of a live key is introspected without reading the keys again once they are loaded', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    let lists = 0;
    const store: Store = { ...base, keys: { ...base.keys!, listSigningKeys: () => { lists += 1; return base.keys!.listSigningKeys(); } } };
    const t = await createTestApp({ ...JWT, accessTokenTtl: HOUR }, store);
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const listed = lists;
    for (let i = 0; i < 3; i += 1) expect(JSON.parse(await introspected(t.app, t, token))).toMatchObject({ active: true });
    expect(lists).toBe(listed);
  });
});
