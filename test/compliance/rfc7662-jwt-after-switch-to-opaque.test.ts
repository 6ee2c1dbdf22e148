// RFC 7662 §2.2, RFC 9068 §4, RFC 9700 §4.14: a JWT of a key replaced as leaked stays refused after the router is switched back to opaque tokens.
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import express from 'express';
import { createTestApp, createTestRouter, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken, introspect } from '../helpers/token-requests.js';
import { callApi, decodeJwt, forgeJwt } from '../helpers/jwt.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { Store } from '../../src/stores/contract.js';
import type { OAuthRouter } from '../../src/types.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { builtInStores, withOpenedStore } from '../helpers/built-in-stores.js';

const JWT = { accessTokenFormat: 'jwt', accessTokenTtl: 3600 } as const;
const OPAQUE = { accessTokenTtl: 3600 } as const;

interface Instance {
  readonly oauth: OAuthRouter;
  readonly app: express.Express;
}

/** An instance of the deployment on `store`, as a restart with new options starts it. */
function instance(store: Store, options: Parameters<typeof createTestRouter>[1]): Instance {
  const oauth = createTestRouter(store, options);
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
  return { oauth, app };
}

/** The introspection answer's exact text: an inactive one is `{"active":false}` and nothing more (§2.2). */
async function introspected(app: express.Express, t: TestApp, token: string): Promise<string> {
  const res = await introspect(app, t.credentialsClient, { token });
  expect(res.status).toBe(200);
  return res.text;
}

afterEach(() => { vi.useRealTimers(); });

const STORES = builtInStores('jwt_to_opaque', {}, { redisPrefix: process.env.OAUTH_TEST_REDIS_PREFIX ?? '' });

describe.each(STORES)('RFC 9700 §4.14 on the %s store: after the switch back to opaque tokens, a JWT of a key replaced as leaked', (_label, available, open) => {
  it.skipIf(!available)('is refused by requireBearer and inactive at introspection, its record found or not; a JWT of the new key is honoured by its record', async () => {
    await withOpenedStore(open, async ({ store }) => {
      const t = await createTestApp(JWT, store);
      const jwt = instance(store, JWT);
      const leaked = await clientCredentialsToken(jwt.app, t.credentialsClient);
      await jwt.oauth.rotateSigningKey({ leaked: true });
      const fresh = await clientCredentialsToken(jwt.app, t.credentialsClient);
      const opaque = instance(store, OPAQUE);
      // A genuine token of ours: its record is what an opaque router honours, and it must not be honoured.
      expect(await store.tokens.findAccessToken(hashToken(leaked))).not.toBeNull();
      expect((await callApi(opaque.app, leaked)).status).toBe(401);
      expect(await introspected(opaque.app, t, leaked)).toBe('{"active":false}');
      expect((await callApi(opaque.app, fresh)).status).toBe(200);
      expect(JSON.parse(await introspected(opaque.app, t, fresh))).toMatchObject({ active: true, token_type: 'Bearer' });
      const own = await clientCredentialsToken(opaque.app, t.credentialsClient);
      expect((await callApi(opaque.app, own)).status).toBe(200);
    });
  });

  it.skipIf(!available)('is refused by an opaque instance started after a replacement made while it was in use', async () => {
    await withOpenedStore(open, async ({ store }) => {
      const t = await createTestApp(JWT, store);
      const jwt = instance(store, JWT);
      const token = await clientCredentialsToken(jwt.app, t.credentialsClient);
      const opaque = instance(store, OPAQUE);
      expect((await callApi(opaque.app, token)).status).toBe(200);
      expect(JSON.parse(await introspected(opaque.app, t, token))).toMatchObject({ active: true });
      // Replaced on this instance's store by the JWT router (another instance, or the CLI, alike).
      await jwt.oauth.rotateSigningKey({ leaked: true });
      // A fresh opaque instance reads the keys at once; the one already running, at its next read (within a minute).
      const restarted = instance(store, OPAQUE);
      expect((await callApi(restarted.app, token)).status).toBe(401);
      expect(await introspected(restarted.app, t, token)).toBe('{"active":false}');
    });
  });
});

describe('RFC 9700 §4.14 after the switch back to opaque tokens: an opaque instance already running', () => {
  it('stops honouring a JWT of a key another instance replaced as leaked when it next reads the keys, from its bearer cache too', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    // The memory store has a revocation feed: the opaque instance serves the token from its bearer cache after the first check.
    expect(store.revocations).toBeDefined();
    const t = await createTestApp(JWT, store);
    const jwt = instance(store, JWT);
    const token = await clientCredentialsToken(jwt.app, t.credentialsClient);
    const opaque = instance(store, OPAQUE);
    for (let i = 0; i < 2; i += 1) expect((await callApi(opaque.app, token)).status).toBe(200);
    await jwt.oauth.rotateSigningKey({ leaked: true });
    // Its first check past a minute reads the keys in the background, and refuses from then on.
    vi.advanceTimersByTime(61_000);
    await callApi(opaque.app, token);
    await vi.waitFor(async () => { expect((await callApi(opaque.app, token)).status).toBe(401); });
    expect(await introspected(opaque.app, t, token)).toBe('{"active":false}');
  });
});

describe('RFC 9700 §4.14 after the switch back to opaque tokens: a store whose keys were all deleted by hand', () => {
  it('a JWT of a deleted key is refused and inactive, its record found: an empty store is no proof the JWT was a host key\'s', async () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp(JWT, store);
    const jwt = instance(store, JWT);
    const token = await clientCredentialsToken(jwt.app, t.credentialsClient);
    // The operator deletes the leaked key's record by hand, the store holding no other (README: without replacement).
    for (const record of await store.keys!.listSigningKeys()) await store.keys!.deleteSigningKey!(record.kid);
    expect(await store.keys!.listSigningKeys()).toEqual([]);
    expect(await store.tokens.findAccessToken(hashToken(token))).not.toBeNull();
    const opaque = instance(store, OPAQUE);
    expect((await callApi(opaque.app, token)).status).toBe(401);
    expect(await introspected(opaque.app, t, token)).toBe('{"active":false}');
    // Reading it made no key, and the router's own opaque tokens are honoured.
    expect(await store.keys!.listSigningKeys()).toEqual([]);
    expect((await callApi(opaque.app, await clientCredentialsToken(opaque.app, t.credentialsClient))).status).toBe(200);
  });
});

describe('RFC 9068 §4 while instances switch to opaque tokens with a shorter accessTokenTtl', () => {
  it('an opaque instance deletes no key and retires none by its own lifetime: a JWT instance\'s token of a superseded key, within its lifetime, stays accepted at both', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp(JWT, store);
    const jwt = instance(store, JWT);
    await clientCredentialsToken(jwt.app, t.credentialsClient);
    // A planned rotation: the new key signs once published (3 minutes); the old one signs until then.
    const rotated = await jwt.oauth.rotateSigningKey();
    vi.advanceTimersByTime(170_000);
    const token = await clientCredentialsToken(jwt.app, t.credentialsClient);
    expect(decodeJwt(token).header.kid).not.toBe(rotated.kid);
    // Ten minutes on (the token has most of its hour left), an instance switched to opaque with 5-minute tokens reads the keys.
    vi.advanceTimersByTime(600_000);
    const opaque = instance(store, { accessTokenTtl: 300 });
    expect((await callApi(opaque.app, token)).status).toBe(200);
    expect((await store.keys!.listSigningKeys()).map((record) => record.kid)).toContain(decodeJwt(token).header.kid);
    // The JWT instance reads the keys again (past its minute): the key is still there, and its token still verifies.
    vi.advanceTimersByTime(61_000);
    await callApi(jwt.app, token);
    await vi.waitFor(async () => { expect((await callApi(jwt.app, token)).status).toBe(200); });
  });
});

describe('RFC 9068 §4 after the switch back to opaque tokens: junk kids', () => {
  it('a JWT-shaped token of no record, whatever its kid, does not hold back the read of the keys a genuine JWT of another instance\'s new key needs, at requireBearer or at introspection', async () => {
    // The monotonic clock stands still: every step below is within the few seconds an unknown kid's read waits for.
    vi.useFakeTimers({ toFake: ['performance'] });
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp(JWT, store);
    const jwt = instance(store, JWT);
    const opaque = instance(store, OPAQUE);
    const first = await clientCredentialsToken(jwt.app, t.credentialsClient);
    expect((await callApi(opaque.app, first)).status).toBe(200);
    const junk = (kid: unknown) => forgeJwt({ alg: 'ES256', typ: 'at+jwt', kid }, decodeJwt(first).claims, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const junkKid = junk(`junk-${'x'.repeat(40)}`);
    expect((await callApi(opaque.app, junkKid)).status).toBe(401);
    expect(await introspected(opaque.app, t, junkKid)).toBe('{"active":false}');
    // Another instance replaces its keys as leaked (its new key signs at once) and issues a token of the new key.
    await jwt.oauth.rotateSigningKey({ leaked: true });
    const [fresh, other] = [await clientCredentialsToken(jwt.app, t.credentialsClient), await clientCredentialsToken(jwt.app, t.credentialsClient)];
    expect((await callApi(opaque.app, fresh)).status).toBe(200);
    expect((await callApi(opaque.app, junk(42))).status).toBe(401);
    expect(JSON.parse(await introspected(opaque.app, t, other))).toMatchObject({ active: true });
    expect((await callApi(opaque.app, first)).status).toBe(401);
  });
});

describe('RFC 9068 §4 after the switch back to opaque tokens: what is not refused', () => {
  it('a JWT of a host key (jwt.signingKeys) is honoured by its record while jwt.signingKeys still gives the key; without it, on a store that holds no keys, it is refused', async () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const t = await createTestApp({ ...JWT, jwt: { signingKeys: [key] } }, store);
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const opaque = instance(store, { ...OPAQUE, jwt: { signingKeys: [key] } });
    expect((await callApi(opaque.app, token)).status).toBe(200);
    expect(JSON.parse(await introspected(opaque.app, t, token))).toMatchObject({ active: true });
    // The key dropped: no key verifies it, as at a JWT router (an empty store is no proof the JWT was the host's).
    const dropped = instance(store, OPAQUE);
    // RFC 6750 §3.1: the client is told invalid_token, so it refreshes (and gets an opaque token).
    const refused = await callApi(dropped.app, token);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    expect(await introspected(dropped.app, t, token)).toBe('{"active":false}');
    // Reading it made no key: an opaque router never generates one.
    expect(await store.keys!.listSigningKeys()).toEqual([]);
  });

  it('opaque tokens ask nothing of the keys, at requireBearer or at introspection', async () => {
    const base = createMemoryStore({ sweepIntervalSeconds: 0 });
    let lists = 0;
    const store: Store = { ...base, keys: { ...base.keys!, listSigningKeys: () => { lists += 1; return base.keys!.listSigningKeys(); } } };
    const t = await createTestApp(OPAQUE, store);
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    expect(token.split('.').length).toBeLessThan(3);
    for (let i = 0; i < 3; i += 1) expect((await callApi(t.app, token)).status).toBe(200);
    expect(JSON.parse(await introspected(t.app, t, token))).toMatchObject({ active: true });
    expect(lists).toBe(0);
  });

  it('a JWT of a live store key is honoured by its record whatever jwt.audience says now (an opaque router checks no claims)', async () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 0 });
    const t = await createTestApp({ ...JWT, jwt: { audience: 'https://old.example' } }, store);
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    expect(decodeJwt(token).claims.aud).toBe('https://old.example');
    const opaque = instance(store, OPAQUE);
    expect((await callApi(opaque.app, token)).status).toBe(200);
    expect(JSON.parse(await introspected(opaque.app, t, token))).toMatchObject({ active: true });
  });
});
