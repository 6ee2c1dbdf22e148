// Redis store: a revocation whose process dies mid-drain leaves no token of it usable, and its drain is resumed.
import { createClient, createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenRecord } from '../../src/stores/contract.js';
import { createRedisKeys, type RedisKeys } from '../../src/stores/redis/codec.js';
import { createRedisStore, type RedisStore } from '../../src/stores/redis/index.js';
import { DRAIN_CHUNK } from '../../src/stores/redis/scripts.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { CLUSTER_NODES, CLUSTER_ROOT_NODES, connectNodes, wipeClusterPrefix } from '../helpers/redis-cluster.js';
import { redisPrefixStore } from '../helpers/redis-prefix-store.js';
import { until } from '../helpers/until.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis interrupted-drain tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const HOUR = 3_600_000;
const quiet = { warn: () => undefined };

function token(name: string, grantId: string, userId: string | null, lifetimeMs = 2 * HOUR): TokenRecord {
  return {
    tokenHash: hashSecret(name), grantId, clientId: 'c', userId, scope: ['read'], issuer: 'https://as.example',
    expiresAt: new Date(Date.now() + lifetimeMs),
  };
}

/** Whether a command runs DRAIN_CHUNK (by SHA, or by source after a NOSCRIPT). */
const isDrainChunk = (args: readonly string[]): boolean =>
  (args[0] === 'EVALSHA' && args[1] === DRAIN_CHUNK.sha) || (args[0] === 'EVAL' && args[1] === DRAIN_CHUNK.source);

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
type OpenDying = () => Promise<{ store: RedisStore; close(): Promise<void> }>;

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

  it("refuses every token of the interrupted revocation at once, moves the feed's mark, and the sweep resumes the drain", async () => {
    const openDying: OpenDying = async () => {
      const real = createClient({ url });
      await real.connect();
      let dead = false;
      const dyingStore = await createRedisStore({
        client: {
          get isOpen() {
            return real.isOpen;
          },
          async sendCommand(args) {
            if (dead) throw new Error('the process is gone');
            const reply = await real.sendCommand([...args]);
            if (isDrainChunk(args)) dead = true;
            return reply;
          },
        },
        prefix, sweepIntervalSeconds: 0, logger: quiet,
      });
      return { store: dyingStore, close: async () => { await dyingStore.close(); await real.close(); } };
    };
    const plainAdmin: Admin = {
      zCard: (key) => admin.zCard(key),
      zAdd: (key, members) => admin.zAdd(key, members),
      exists: (list) => admin.exists(list),
    };
    await interruptedDrain(store, keys, plainAdmin, openDying, () => store.sweepExpired());
  });

  it('a drain that finishes leaves no registration behind, so lookups stay one command', async () => {
    // After the first test's revocation of the integration.
    const authorizedAt = new Date(Date.now() + 1);
    expect(await store.tokens.saveTokens(token('d1', 'g4', 'u4'), null, { authorizedAt, newGrant: true })).toBe(true);
    await store.tokens.revokeClientTokens!('c', 'u4');
    expect(await admin.exists([keys.draining(keys.userIndex('c', 'u4')), keys.drains, keys.drainMarker])).toBe(0);
    expect(await store.tokens.findAccessToken(hashSecret('d1'))).toBeNull();
  });

  it('the sweep adopts and drains a draining set an earlier version left unregistered', async () => {
    const authorizedAt = new Date(Date.now() + 1);
    expect(await store.tokens.saveTokens(token('e1', 'g5', 'u5'), token('s5', 'g5', 'u5'), { authorizedAt, newGrant: true })).toBe(true);
    // What 0.2's revocation left when its process died before draining: the index renamed, no registry entry.
    const index = keys.userIndex('c', 'u5');
    await admin.rename(index, keys.draining(index));
    // A user index whose user id is "draining" is an index, not a draining set: the sweep leaves it.
    expect(await store.tokens.saveTokens(token('f1', 'g6', 'draining'), null, { authorizedAt, newGrant: true })).toBe(true);
    await store.sweepExpired();
    expect(await admin.exists([keys.draining(index), keys.accessToken(hashSecret('e1')), keys.drains, keys.drainMarker])).toBe(0);
    expect(await admin.exists(keys.revokedGrant('g5'))).toBe(1);
    expect(await store.tokens.findAccessToken(hashSecret('f1'))).not.toBeNull();
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

  it('refuses the tokens at once; the next store opened finishes the drain', async () => {
    const openDying: OpenDying = async () => {
      const real = createCluster({ rootNodes: CLUSTER_ROOT_NODES.map((u) => ({ url: u })) });
      await real.connect();
      let dead = false;
      const dyingStore = await createRedisStore({
        clusterClient: {
          get isOpen() {
            return real.isOpen;
          },
          async sendCommand(firstKey, isReadonly, args) {
            if (dead) throw new Error('the process is gone');
            const reply = await real.sendCommand(firstKey, isReadonly, args);
            if (isDrainChunk(args)) dead = true;
            return reply;
          },
        },
        prefix, logger: quiet,
      });
      return { store: dyingStore, close: async () => { await dyingStore.close(); await real.close(); } };
    };
    const clusterAdmin: Admin = {
      zCard: (key) => admin.zCard(key),
      zAdd: (key, members) => admin.zAdd(key, members),
      // Every key the test names is of the token family, one slot.
      exists: (list) => admin.exists(list),
    };
    await interruptedDrain(store, keys, clusterAdmin, openDying, async () => {
      // A deploy's next instance: its opening claims the abandoned drain and finishes it.
      const next = await createRedisStore({ cluster: { rootNodes: CLUSTER_ROOT_NODES }, prefix, logger: quiet });
      await next.close();
    });
  });
});
