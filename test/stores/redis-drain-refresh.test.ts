// Redis store: a refresh that reads a refresh token while a large revocation is still draining mints nothing that outlives it.
import { describe, expect, it } from 'vitest';
import type { AdministrationStore, TokenRecord } from '../../src/stores/contract.js';
import { createRedisKeys } from '../../src/stores/redis/codec.js';
import { START_REVOCATION } from '../../src/stores/redis/scripts.js';
import { redisPrefixStore } from '../helpers/redis-prefix-store.js';
import { openDyingRedisStore, runs } from '../helpers/redis-dying-store.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis drain tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const redis = redisPrefixStore(url, 'drain-refresh');
const { prefix, admin } = redis;
let store: AdministrationStore & { sweepExpired(): Promise<void> };
const keys = createRedisKeys(prefix);
const HOUR = 3_600_000;

function token(name: string, grantId: string, clientId: string, userId: string | null): TokenRecord {
  return {
    tokenHash: hashSecret(name), grantId, clientId, userId, scope: ['read'], issuer: 'https://as.example',
    expiresAt: new Date(Date.now() + HOUR),
  };
}

/**
 * The state a `revokeClientTokens` of millions of tokens is in for seconds (BENCHMARKS: 1,000,000 tokens took tens of
 * seconds to drain, 500 per script), made by the store's own revocation: its first script (START_REVOCATION) has run
 * (the moment recorded, the index moved to a registered draining set, the drain marker set), and its process dies
 * before the first chunk, so the test does not depend on catching a drain in flight.
 */
async function startDrain(clientId: string, userId?: string): Promise<void> {
  const dying = await openDyingRedisStore({ url }, prefix, runs(START_REVOCATION));
  try {
    await expect(dying.store.tokens.revokeClientTokens!(clientId, userId)).rejects.toThrow();
  } finally {
    await dying.close();
  }
}

/** The drain's end, as a resumption makes it once the dead drainer's lease has run out: the sweep drains the set. */
async function finishDrain(index: string): Promise<void> {
  await admin.zAdd(keys.drains, keys.drainingSets(index).map((value) => ({ score: 0, value })), { XX: true });
  await store.sweepExpired();
  expect(await admin.exists([...keys.drainingSets(index)])).toBe(0);
}

describe.skipIf(!url)('Redis store: refresh during a revocation drain (RFC 7009 §2.1, RFC 6749 §10.4)', () => {
  redis.openAround((opened) => {
    store = opened as typeof store;
  });

  it('refuses an access token for a grant whose refresh token the integration revocation has yet to drain', async () => {
    const authorizedAt = new Date(Date.now() - 10_000);
    expect(await store.tokens.saveTokens(token('a0', 'g-client', 'c1', 'u1'), token('r0', 'g-client', 'c1', 'u1'), { authorizedAt })).toBe(true);
    await startDrain('c1');

    // The refresh token, not drained yet, is refused by lookups from the revocation's first script on...
    expect(await store.tokens.findRefreshToken(hashSecret('r0'))).toBeNull();
    // ...and a refresh that read it just before, on an instance whose clock runs ahead (its request "began" after the
    // revocation's moment), must not get a token of that grant: it would outlive the revocation.
    const startedAt = new Date(Date.now() + 5);
    expect(await store.tokens.saveTokens(token('a1', 'g-client', 'c1', 'u1'), null, { authorizedAt: startedAt })).toBe(false);

    await finishDrain(keys.clientIndex('c1'));
    expect(await admin.exists(keys.revokedGrant('g-client'))).toBe(1);
    expect(await store.tokens.findAccessToken(hashSecret('a1'))).toBeNull();
    expect(await store.tokens.findRefreshToken(hashSecret('r0'))).toBeNull();
  });

  it('refuses the same for a user revocation, and still saves grants the drain does not hold', async () => {
    const authorizedAt = new Date(Date.now() - 10_000);
    expect(await store.tokens.saveTokens(token('b0', 'g-user', 'c2', 'u2'), token('s0', 'g-user', 'c2', 'u2'), { authorizedAt })).toBe(true);
    expect(await store.tokens.saveTokens(token('b9', 'g-other-user', 'c2', 'u3'), token('s9', 'g-other-user', 'c2', 'u3'), { authorizedAt })).toBe(true);
    await startDrain('c2', 'u2');

    const startedAt = new Date(Date.now() + 5);
    expect(await store.tokens.saveTokens(token('b1', 'g-user', 'c2', 'u2'), null, { authorizedAt: startedAt })).toBe(false);
    // Another user's grant at the integration, and a new grant of the revoked user, are not being revoked.
    expect(await store.tokens.saveTokens(token('b8', 'g-other-user', 'c2', 'u3'), null, { authorizedAt: startedAt })).toBe(true);
    expect(await store.tokens.saveTokens(token('b7', 'g-new', 'c2', 'u2'), token('s7', 'g-new', 'c2', 'u2'), { authorizedAt: startedAt })).toBe(true);
    // A client_credentials token of the integration is not held either.
    expect(await store.tokens.saveTokens(token('cc', 'g-cc', 'c2', null), null, { authorizedAt: startedAt, newGrant: true })).toBe(true);

    await finishDrain(keys.userIndex('c2', 'u2'));
    expect(await store.tokens.findAccessToken(hashSecret('b1'))).toBeNull();
    expect(await store.tokens.findAccessToken(hashSecret('b0'))).toBeNull();
    expect(await store.tokens.findAccessToken(hashSecret('b8'))).not.toBeNull();
    expect(await store.tokens.findAccessToken(hashSecret('b7'))).not.toBeNull();
    expect(await store.tokens.findAccessToken(hashSecret('cc'))).not.toBeNull();
  });

  it("reads a busy grant's refresh token, not each of its access tokens, while a drain runs", async () => {
    // A grant refreshed ten times a second holds 36,000 live access tokens: checking each against the draining sets
    // took every save of it 34 ms of Redis (all clients waiting), for as long as any drain of the integration ran or
    // a drain interrupted midway left its set (until its tokens expire). Only the refresh token can mint: a grant
    // in the drain has its one refresh token there too (saved with its first access token), or tombstoned.
    // A revocation of the integration, begun before this grant was authorized (another user's tokens), is draining.
    const before = new Date(Date.now() - 10_000);
    expect(await store.tokens.saveTokens(token('someone-else', 'g-else', 'c5', 'u6'), null, { authorizedAt: before, newGrant: true })).toBe(true);
    await startDrain('c5');
    const authorizedAt = new Date(Date.now() + 5);
    const refresh = { ...token('busy-r', 'g-busy', 'c5', 'u5'), expiresAt: new Date(Date.now() + 30 * 24 * HOUR) };
    expect(await store.tokens.saveTokens(token('busy-a', 'g-busy', 'c5', 'u5'), refresh, { authorizedAt })).toBe(true);
    const grantIndex = keys.grantIndex('g-busy');
    const busy = 100_000;
    for (let i = 0; i < busy; i += 5000) {
      await admin.zAdd(grantIndex, Array.from({ length: 5000 }, (_, j) => ({ score: Date.now() + HOUR - i - j, value: keys.accessToken(`busy-${i + j}`) })));
    }

    const startedAt = Date.now();
    for (let i = 0; i < 5; i++) {
      expect(await store.tokens.saveTokens(token(`busy-n${i}`, 'g-busy', 'c5', 'u5'), null, { authorizedAt: new Date() })).toBe(true);
    }
    // 200,000 ZSCOREs a save took about 100 ms each; reading from the top finds the refresh token at once.
    expect((Date.now() - startedAt) / 5).toBeLessThan(20);

    // And once the grant's refresh token waits in a drain (a second revocation of the integration, its process dead
    // too), a refresh that read it just before (its instance's clock ahead) is refused as before.
    await startDrain('c5');
    expect(await admin.zScore(keys.draining(keys.clientIndex('c5')), keys.refreshToken(refresh.tokenHash))).not.toBeNull();
    expect(await store.tokens.saveTokens(token('busy-late', 'g-busy', 'c5', 'u5'), null, { authorizedAt: new Date(Date.now() + 5) })).toBe(false);
  });
});
