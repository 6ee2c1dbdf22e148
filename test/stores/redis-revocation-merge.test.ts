// Redis store: a revocation that finds an earlier one still draining merges the smaller set into the larger, never rewriting the larger.
import { describe, expect, it } from 'vitest';
import type { AdministrationStore } from '../../src/stores/contract.js';
import { createRedisKeys } from '../../src/stores/redis/codec.js';
import { redisPrefixStore } from '../helpers/redis-prefix-store.js';
import { REVOCATION_MERGE_MAX, START_REVOCATION } from '../../src/stores/redis/scripts.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis merge tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const redis = redisPrefixStore(url, 'revocation-merge');
const { prefix, admin } = redis;
const keys = createRedisKeys(prefix);
let store: AdministrationStore;
const LATER = Date.now() + 3_600_000;

/** `n` members `name-i` of the set, each scored by its token's expiry. */
async function fill(key: string, name: string, n: number): Promise<void> {
  const members = Array.from({ length: n }, (_, i) => ({ score: LATER + i, value: keys.accessToken(`${name}-${i}`) }));
  for (let i = 0; i < n; i += 1000) await admin.zAdd(key, members.slice(i, i + 1000));
}

/**
 * START_REVOCATION as the store runs it (same keys and arguments); its reply is how many members it copied (-1: it
 * only moved members between the two draining sets, recording nothing), then the draining sets it registered.
 */
async function start(index: string, revokedAt: string): Promise<unknown[]> {
  return (await admin.eval(START_REVOCATION.source, {
    keys: [revokedAt, index, ...keys.drainingSets(index), keys.drains, keys.drainMarker],
    arguments: [String(Date.now()), '86400000', String(Date.now() + 60_000), `${prefix}revocations`],
  })) as unknown[];
}

describe.skipIf(!url)('Redis store: a revocation while another drains (RFC 7009 §2.1)', () => {
  redis.openAround((opened) => {
    store = opened;
  });

  it('copies only the few tokens saved since the drain began into the large draining set', async () => {
    // A `clients disable` (or the retry the README advises after `revocation_incomplete`) while a `tokens revoke
    // --client` of 1,000,000 tokens drains: the index holds only what was saved since.
    const index = keys.clientIndex('big');
    await fill(keys.draining(index), 'old', 5000);
    await fill(index, 'new', 10);
    expect(await start(index, keys.clientRevokedAt('big'))).toEqual([10, keys.draining(index)]);
    expect(await admin.exists(index)).toBe(0);
    expect(await admin.zCard(keys.draining(index))).toBe(5010);
    expect(await admin.zScore(keys.draining(index), keys.accessToken('new-9'))).toBe(LATER + 9);
    expect(await admin.pExpireTime(keys.draining(index))).toBe(LATER + 4999);
  });

  it('copies a small leftover drain into a large index, then takes the index as the draining set', async () => {
    // A revocation interrupted a day ago left a few members; the integration saved many tokens since.
    const index = keys.clientIndex('left');
    await fill(keys.draining(index), 'old', 7);
    await fill(index, 'new', 3000);
    expect(await start(index, keys.clientRevokedAt('left'))).toEqual([7, keys.draining(index)]);
    expect(await admin.exists(index)).toBe(0);
    expect(await admin.zCard(keys.draining(index))).toBe(3007);
    expect(await admin.zScore(keys.draining(index), keys.accessToken('old-6'))).toBe(LATER + 6);

    // And the drain that follows empties it.
    await store.tokens.revokeClientTokens('left');
    expect(await admin.exists(keys.draining(index))).toBe(0);
  });

  it(`never copies more than ${REVOCATION_MERGE_MAX} members in one script: past it, the index goes whole to the second set`, async () => {
    // An interrupted revocation of a large integration left its draining set, and the integration has as many tokens
    // again since: copying the smaller of two 1,000,000-member sets still held the whole Redis for 3.6 s (one script).
    const index = keys.clientIndex('both');
    const [first, second] = keys.drainingSets(index);
    await fill(first, 'old', REVOCATION_MERGE_MAX + 1);
    await fill(index, 'new', REVOCATION_MERGE_MAX + 1);
    expect(await start(index, keys.clientRevokedAt('both'))).toEqual([0, first, second]);
    // A RENAME: the moment recorded, and from it on both sets registered (lookups refuse their tokens), each whole.
    expect(await admin.exists(index)).toBe(0);
    expect(await admin.zCard(first)).toBe(REVOCATION_MERGE_MAX + 1);
    expect(await admin.zCard(second)).toBe(REVOCATION_MERGE_MAX + 1);
    expect(await admin.exists([keys.clientRevokedAt('both'), keys.drainMarker])).toBe(2);
    expect(await admin.zRange(keys.drains, 0, -1)).toEqual(expect.arrayContaining([first, second]));

    // The store's revocation (a retry) drains both, and unregisters them (the first test's set stays registered).
    await store.tokens.revokeClientTokens('both');
    expect(await admin.exists([index, first, second])).toBe(0);
    expect(await admin.zRange(keys.drains, 0, -1)).toEqual([keys.draining(keys.clientIndex('big'))]);
  });

  it('with both draining sets busy and past the bound, moves the smaller into the larger a bounded run at a time, then the index', async () => {
    // Three revocations of more than 10,000 tokens each, the first two unfinished.
    const index = keys.clientIndex('three');
    const [first, second] = keys.drainingSets(index);
    await fill(first, 'a', REVOCATION_MERGE_MAX + 1);
    await fill(second, 'b', REVOCATION_MERGE_MAX + 2);
    await fill(index, 'c', REVOCATION_MERGE_MAX + 3);
    // One run moves the bound's worth of the smaller set into the larger, and records nothing: not yet the moment.
    expect(await start(index, keys.clientRevokedAt('three'))).toEqual([-1]);
    expect(await admin.exists(keys.clientRevokedAt('three'))).toBe(0);
    expect(await admin.zCard(first)).toBe(1);
    expect(await admin.zCard(second)).toBe(2 * REVOCATION_MERGE_MAX + 2);
    expect(await admin.zScore(second, keys.accessToken('a-0'))).toBe(LATER);
    expect(await admin.zCard(index)).toBe(REVOCATION_MERGE_MAX + 3);
    // The next copies the one member left and moves the index into the freed set.
    expect(await start(index, keys.clientRevokedAt('three'))).toEqual([1, first, second]);
    expect(await admin.exists([index, keys.clientRevokedAt('three')])).toBe(1);
    expect(await admin.zCard(first)).toBe(REVOCATION_MERGE_MAX + 3);
    expect(await admin.zCard(second)).toBe(2 * REVOCATION_MERGE_MAX + 3);
    expect(await admin.pExpireTime(second)).toBe(LATER + REVOCATION_MERGE_MAX + 1);

    await store.tokens.revokeClientTokens('three');
    expect(await admin.exists([index, first, second])).toBe(0);
  });
});
