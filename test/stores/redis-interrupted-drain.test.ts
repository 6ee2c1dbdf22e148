// Redis store: a revocation whose process dies mid-drain leaves no token of it usable, and its drain is resumed.
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenRecord } from '../../src/stores/contract.js';
import { createRedisKeys, type RedisKeys } from '../../src/stores/redis/codec.js';
import { createRedisStore, type RedisStore } from '../../src/stores/redis/index.js';
import { REVOKE_CHUNK } from '../../src/stores/redis/drain.js';
import { DRAIN_CHUNK, REVOCATION_MERGE_MAX } from '../../src/stores/redis/scripts.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { CLUSTER_NODES, CLUSTER_ROOT_NODES, connectNodes, wipeClusterPrefix } from '../helpers/redis-cluster.js';
import { openDyingRedisStore, runs, type DyingRedisStore, type DyingRedisTarget } from '../helpers/redis-dying-store.js';
import { redisPrefixStore } from '../helpers/redis-prefix-store.js';
import { until } from '../helpers/until.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis interrupted-drain tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const HOUR = 3_600_000;
const quiet = { warn: () => undefined };

function token(name: string, grantId: string, userId: string | null, lifetimeMs = 2 * HOUR, clientId = 'c'): TokenRecord {
  return {
    tokenHash: hashSecret(name), grantId, clientId, userId, scope: ['read'], issuer: 'https://as.example',
    expiresAt: new Date(Date.now() + lifetimeMs),
  };
}

/** What a test of either layout reaches Redis by: admin commands routed by key, as redis-cli -c would. */
interface Admin {
  zCard(key: string): Promise<number>;
  zAdd(key: string, members: { score: number; value: string }[]): Promise<unknown>;
  exists(keys: string[]): Promise<number>;
}

/**
 * A store of a process that dies (SIGKILL, a crash, a deploy) right after its revocation's first drain chunk: that
 * chunk runs, every command after it fails, as the store's own would once its process is gone.
 */
type OpenDying = () => Promise<DyingRedisStore>;

/** Opens a store on `prefix` at `target` that dies after its first DRAIN_CHUNK. */
const dyingAfterFirstChunk = (target: DyingRedisTarget, prefix: string): OpenDying =>
  () => openDyingRedisStore(target, prefix, runs(DRAIN_CHUNK));

/** `n` members of `key` naming no stored token, expiring in an hour (before the real tokens), 1,000 a command. */
async function fill(admin: Admin, key: string, name: string, n: number): Promise<void> {
  const members = Array.from({ length: n }, (_, i) => ({ score: Date.now() + HOUR + i, value: `${key}:${name}-${i}` }));
  for (let i = 0; i < n; i += 1000) await admin.zAdd(key, members.slice(i, i + 1000));
}

/**
 * The revocation behind an earlier one left unfinished, both too large to merge: an interrupted revocation of a large
 * integration left its draining set (`REVOCATION_MERGE_MAX` members and more), the integration issued as many tokens
 * again, and a second revocation (a retry, `clients disable`) dies after its first drain chunk too. The version before
 * moved nothing then and drained the earlier set first, so the integration's later tokens passed every lookup until
 * someone retried, and a retry would have revoked tokens issued after the second revocation too.
 */
async function interruptedBehindEarlierDrain(
  store: RedisStore, keys: RedisKeys, admin: Admin, openDying: OpenDying, resume: () => Promise<void>,
): Promise<void> {
  const index = keys.clientIndex('big');
  const [first, second] = keys.drainingSets(index);
  const revoke = async (): Promise<void> => {
    const dying = await openDying();
    try {
      await expect(dying.store.tokens.revokeClientTokens!('big')).rejects.toThrow();
    } finally {
      await dying.close();
    }
  };
  const authorizedAt = new Date(Date.now() - 10_000);
  expect(await store.tokens.saveTokens(token('old', 'gb0', 'ub', 2 * HOUR, 'big'), null, { authorizedAt, newGrant: true })).toBe(true);
  // The first chunk drains the 500 fillers expiring soonest and leaves more than the merge bound.
  await fill(admin, index, 'early', REVOCATION_MERGE_MAX + REVOKE_CHUNK + 1);
  await revoke();
  expect(await admin.zCard(first)).toBe(REVOCATION_MERGE_MAX + 2);
  expect(await store.tokens.findAccessToken(hashSecret('old'))).toBeNull();

  const since = new Date(Date.now() + 5);
  expect(await store.tokens.saveTokens(
    token('a1', 'gb1', 'ub', 2 * HOUR, 'big'), token('r1', 'gb1', 'ub', 30 * 24 * HOUR, 'big'), { authorizedAt: since },
  )).toBe(true);
  expect(await store.tokens.saveTokens(token('cc', 'gb2', null, 2 * HOUR, 'big'), null, { authorizedAt: since, newGrant: true })).toBe(true);
  await fill(admin, index, 'since', REVOCATION_MERGE_MAX + 1);
  await revoke();

  // Every token that existed at the second revocation's moment is refused, though its process died draining.
  expect(await store.tokens.findAccessToken(hashSecret('a1'))).toBeNull();
  expect(await store.tokens.findAccessToken(hashSecret('cc'))).toBeNull();
  expect(await store.tokens.findRefreshToken(hashSecret('r1'))).toBeNull();
  expect(await store.tokens.findAccessToken(hashSecret('old'))).toBeNull();
  // Nothing was merged: the index went whole into the second draining set (its tokens still stored), and the first
  // chunk the process ran was the earlier set's.
  expect(await admin.exists([index])).toBe(0);
  expect(await admin.zCard(second)).toBe(REVOCATION_MERGE_MAX + 4);
  expect(await admin.zCard(first)).toBe(REVOCATION_MERGE_MAX + 2 - REVOKE_CHUNK);
  expect(await admin.exists([keys.accessToken(hashSecret('a1'))])).toBe(1);
  // A token issued after the revocation passes, and stays after the drains are resumed.
  const later = new Date(Date.now() + 5);
  expect(await store.tokens.saveTokens(token('a2', 'gb3', 'ub', 2 * HOUR, 'big'), null, { authorizedAt: later, newGrant: true })).toBe(true);
  expect(await store.tokens.findAccessToken(hashSecret('a2'))).not.toBeNull();

  // Once the dead processes' leases have run out, another instance finishes both revocations, each set on its own.
  await admin.zAdd(keys.drains, [{ score: 0, value: first }, { score: 0, value: second }]);
  await resume();
  expect(await admin.exists([
    first, second, keys.accessToken(hashSecret('old')), keys.accessToken(hashSecret('a1')),
    keys.refreshToken(hashSecret('r1')), keys.accessToken(hashSecret('cc')),
  ])).toBe(0);
  expect(await admin.exists([keys.revokedGrant('gb1')])).toBe(1);
  expect(await admin.exists([keys.drains, keys.drainMarker])).toBe(0);
  expect(await store.tokens.findAccessToken(hashSecret('a2'))).not.toBeNull();
  expect(await admin.zCard(index)).toBe(1);
}

/**
 * The scenario on one layout: `store` (with a feed) is another instance, on the same prefix as `openDying`'s.
 * `resume` stands for whatever finishes the drain there once the dead process's lease has run out.
 */
async function interruptedDrain(
  store: RedisStore, keys: RedisKeys, admin: Admin, openDying: OpenDying, resume: () => Promise<void>,
): Promise<void> {
  const authorizedAt = new Date(Date.now() - 10_000);
  expect(await store.tokens.saveTokens(token('a1', 'g1', 'u1'), token('r1', 'g1', 'u1', 30 * 24 * HOUR), { authorizedAt })).toBe(true);
  expect(await store.tokens.saveTokens(token('cc', 'g2', null), null, { authorizedAt, newGrant: true })).toBe(true);
  // 500 tokens expiring sooner, so the first chunk (500, lowest expiry first) drains them and leaves the real ones.
  const index = keys.clientIndex('c');
  await admin.zAdd(index, Array.from({ length: 500 }, (_, i) => ({ score: Date.now() + HOUR + i, value: keys.accessToken(`filler-${i}`) })));
  await until('the feed subscribed', () => store.revocations?.mark() != null);
  const markBefore = store.revocations?.mark();

  const dying = await openDying();
  try {
    await expect(dying.store.tokens.revokeClientTokens!('c')).rejects.toThrow();
  } finally {
    await dying.close();
  }
  // What the dead process left: the revocation's moment, and its tokens still stored, in the draining set.
  const draining = keys.draining(index);
  expect(await admin.zCard(draining)).toBe(3);
  expect(await admin.exists([keys.accessToken(hashSecret('a1'))])).toBe(1);

  // Nobody retries it, yet no token of it passes a bearer check (or a refresh's lookup, or introspection).
  expect(await store.tokens.findAccessToken(hashSecret('a1'))).toBeNull();
  expect(await store.tokens.findAccessToken(hashSecret('cc'))).toBeNull();
  expect(await store.tokens.findRefreshToken(hashSecret('r1'))).toBeNull();
  // A requireBearer cache filled before the revocation began is dropped: its first step moved every feed's mark.
  await until('the mark moved', () => store.revocations?.mark() !== markBefore, { tries: 80 });
  // Tokens the revocation does not cover still pass (their lookups one round trip more while the drain is left).
  const later = new Date(Date.now() + 5);
  expect(await store.tokens.saveTokens(token('a2', 'g3', 'u1'), null, { authorizedAt: later, newGrant: true })).toBe(true);
  expect(await store.tokens.findAccessToken(hashSecret('a2'))).not.toBeNull();

  // Once the dead process's lease on the drain has run out, another instance finishes it.
  await admin.zAdd(keys.drains, [{ score: 0, value: draining }]);
  await resume();
  expect(await admin.exists([draining, keys.accessToken(hashSecret('a1')), keys.refreshToken(hashSecret('r1'))])).toBe(0);
  expect(await admin.exists([keys.revokedGrant('g1')])).toBe(1);
  expect(await admin.exists([keys.drains])).toBe(0);
  expect(await admin.exists([keys.drainMarker])).toBe(0);
  expect(await store.tokens.findAccessToken(hashSecret('a2'))).not.toBeNull();
}

describe.skipIf(!url)('Redis store: a revocation interrupted mid-drain (RFC 7009 §2.1, RFC 6750 §3.1)', () => {
  const redis = redisPrefixStore(url, 'interrupted-drain');
  const { prefix, admin } = redis;
  const keys = createRedisKeys(prefix);
  let store: RedisStore;
  redis.openAround((opened) => {
    store = opened as RedisStore;
  });
  const plainAdmin: Admin = {
    zCard: (key) => admin.zCard(key),
    zAdd: (key, members) => admin.zAdd(key, members),
    exists: (list) => admin.exists(list),
  };

  it("refuses every token of the interrupted revocation at once, moves the feed's mark, and the sweep resumes the drain", async () => {
    await interruptedDrain(store, keys, plainAdmin, dyingAfterFirstChunk({ url }, prefix), () => store.sweepExpired());
  });

  it('a drain that finishes leaves no registration behind, so lookups stay one command', async () => {
    // After the first test's revocation of the integration.
    const authorizedAt = new Date(Date.now() + 1);
    expect(await store.tokens.saveTokens(token('d1', 'g4', 'u4'), null, { authorizedAt, newGrant: true })).toBe(true);
    await store.tokens.revokeClientTokens!('c', 'u4');
    expect(await admin.exists([...keys.drainingSets(keys.userIndex('c', 'u4')), keys.drains, keys.drainMarker])).toBe(0);
    expect(await store.tokens.findAccessToken(hashSecret('d1'))).toBeNull();
  });

  it('the sweep adopts and drains a draining set an earlier version left unregistered', async () => {
    const authorizedAt = new Date(Date.now() + 1);
    expect(await store.tokens.saveTokens(token('e1', 'g5', 'u5'), token('s5', 'g5', 'u5'), { authorizedAt, newGrant: true })).toBe(true);
    // What 0.2's revocation left when its process died before draining: the index renamed, no registry entry.
    const index = keys.userIndex('c', 'u5');
    await admin.rename(index, keys.draining(index));
    // A second draining set found unregistered (never left so, but a registry lost to eviction would) is adopted too.
    expect(await store.tokens.saveTokens(token('e7', 'g7', 'u7'), null, { authorizedAt, newGrant: true })).toBe(true);
    const index7 = keys.userIndex('c', 'u7');
    await admin.rename(index7, keys.drainingSets(index7)[1]);
    // A user index whose user id is "draining" is an index, not a draining set: the sweep leaves it.
    expect(await store.tokens.saveTokens(token('f1', 'g6', 'draining'), null, { authorizedAt, newGrant: true })).toBe(true);
    await store.sweepExpired();
    expect(await admin.exists([
      keys.draining(index), keys.accessToken(hashSecret('e1')), ...keys.drainingSets(index7), keys.accessToken(hashSecret('e7')),
      keys.drains, keys.drainMarker,
    ])).toBe(0);
    expect(await admin.exists(keys.revokedGrant('g5'))).toBe(1);
    expect(await store.tokens.findAccessToken(hashSecret('f1'))).not.toBeNull();
  });

  it('a revocation behind an unfinished one, both too large to merge, dying: its tokens refused at once; the sweep finishes both', async () => {
    await interruptedBehindEarlierDrain(store, keys, plainAdmin, dyingAfterFirstChunk({ url }, prefix), () => store.sweepExpired());
  });
});

describe.skipIf(CLUSTER_NODES.length === 0)('Redis Cluster store: a revocation interrupted mid-drain, with no sweep', () => {
  const prefix = `oauth-ctest:${process.pid}:interrupted-drain:${Math.random().toString(36).slice(2, 8)}:`;
  const keys = createRedisKeys(prefix, true);
  const admin = createCluster({ rootNodes: CLUSTER_ROOT_NODES.map((u) => ({ url: u })) });
  let store: RedisStore;
  beforeAll(async () => {
    await admin.connect();
    store = await createRedisStore({ cluster: { rootNodes: CLUSTER_ROOT_NODES }, prefix, logger: quiet });
  });
  afterAll(async () => {
    await store?.close();
    await admin.close();
    const nodes = await connectNodes();
    await wipeClusterPrefix(nodes, prefix);
    await Promise.all(nodes.map((n) => n.close()));
  });

  const clusterAdmin: Admin = {
    zCard: (key) => admin.zCard(key),
    zAdd: (key, members) => admin.zAdd(key, members),
    // Every key the test names is of the token family, one slot.
    exists: (list) => admin.exists(list),
  };
  // A deploy's next instance: its opening claims the abandoned drains and finishes them.
  const nextInstance = async (): Promise<void> => {
    const next = await createRedisStore({ cluster: { rootNodes: CLUSTER_ROOT_NODES }, prefix, logger: quiet });
    await next.close();
  };

  it('refuses the tokens at once; the next store opened finishes the drain', async () => {
    await interruptedDrain(store, keys, clusterAdmin, dyingAfterFirstChunk({ rootNodes: CLUSTER_ROOT_NODES }, prefix), nextInstance);
  });

  it('an interrupted revocation behind an earlier unfinished one, both too large to merge: refused at once, both finished', async () => {
    await interruptedBehindEarlierDrain(store, keys, clusterAdmin, dyingAfterFirstChunk({ rootNodes: CLUSTER_ROOT_NODES }, prefix), nextInstance);
  });
});
