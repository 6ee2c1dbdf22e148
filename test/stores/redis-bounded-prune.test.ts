// Redis store: a token save prunes a bounded number of expired index members, so a mass expiry never blocks Redis in one script.
import { describe, expect, it } from 'vitest';
import type { AdministrationStore, TokenRecord } from '../../src/stores/contract.js';
import { createRedisKeys } from '../../src/stores/redis/codec.js';
import { redisPrefixStore } from '../helpers/redis-prefix-store.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { SWEEP_BATCH } from '../../src/stores/sweep-loop.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis prune tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const redis = redisPrefixStore(url, 'bounded-prune');
const { prefix, admin } = redis;
const keys = createRedisKeys(prefix);
let store: AdministrationStore;

function token(name: string, clientId: string): TokenRecord {
  return {
    tokenHash: hashSecret(name), grantId: `g-${name}`, clientId, userId: null, scope: ['read'],
    issuer: 'https://as.example', expiresAt: new Date(Date.now() + 3_600_000),
  };
}

describe.skipIf(!url)('Redis store: pruning an integration index on a save', () => {
  redis.openAround((opened) => {
    store = opened;
  });

  it(`removes at most ${SWEEP_BATCH} expired members per index per save, and the later saves go on`, async () => {
    // An integration whose tokens expired together (1,000,000 issued in a burst and then left alone, or a
    // cluster, which runs no sweep): removing them all in the next save's script held every client of the
    // Redis for its length (an outside run: 299 ms for 300,000 members).
    const index = keys.clientIndex('c1');
    const expired = 2 * SWEEP_BATCH + 500;
    const past = Date.now() - 60_000;
    const members = Array.from({ length: expired }, (_, i) => ({ score: past + i, value: keys.accessToken(`gone-${i}`) }));
    for (let i = 0; i < members.length; i += 1000) await admin.zAdd(index, members.slice(i, i + 1000));

    const authorizedAt = new Date(Date.now() - 1000);
    expect(await store.tokens.saveTokens(token('t1', 'c1'), null, { authorizedAt, newGrant: true })).toBe(true);
    expect(await admin.zCard(index)).toBe(expired - SWEEP_BATCH + 1);
    // The oldest go first: what is left expired is the latest part of the backlog.
    expect(await admin.zCount(index, '-inf', past + SWEEP_BATCH - 1)).toBe(0);

    expect(await store.tokens.saveTokens(token('t2', 'c1'), null, { authorizedAt, newGrant: true })).toBe(true);
    expect(await store.tokens.saveTokens(token('t3', 'c1'), null, { authorizedAt, newGrant: true })).toBe(true);
    expect(await admin.zRange(index, 0, -1)).toEqual(
      expect.arrayContaining([keys.accessToken(hashSecret('t1')), keys.accessToken(hashSecret('t2')), keys.accessToken(hashSecret('t3'))]),
    );
    expect(await admin.zCard(index)).toBe(3);
    expect(await store.tokens.findAccessToken(hashSecret('t1'))).not.toBeNull();
    // The index still expires with its last member.
    expect(await admin.pTTL(index)).toBeGreaterThan(3_500_000);
  });
});
