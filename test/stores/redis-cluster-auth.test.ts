// The Redis store on a password-protected Redis Cluster: the URL's user:password@ reaches every node.
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompleteStore } from '../../src/stores/contract.js';
import { createStoreFromUrl } from '../../src/stores/from-url.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

/**
 * `redis+cluster://default:PASSWORD@127.0.0.1:27100`: one node of a cluster whose every node has requirepass,
 * as .ci/run starts it (.ci/redis-cluster.sh with REDIS_CLUSTER_PASSWORD); the tests are skipped when unset.
 */
const AUTH_CLUSTER_URL = process.env.OAUTH_TEST_REDIS_AUTH_CLUSTER_URL ?? '';

if (!AUTH_CLUSTER_URL) {
  console.info('Password-protected Redis Cluster tests skipped: see .ci/run for OAUTH_TEST_REDIS_AUTH_CLUSTER_URL');
}

const prefix = `oauth-authcluster-${process.pid}-${Math.random().toString(36).slice(2, 8)}:`;
const withPrefix = (url: string): string => `${url}${url.includes('?') ? '&' : '?'}prefix=${encodeURIComponent(prefix)}`;

type NodeClient = ReturnType<typeof createClient>;

/** One authenticated admin client per master, found from the listed node's CLUSTER NODES as an operator would. */
async function connectMasters(): Promise<NodeClient[]> {
  const parsed = new URL(AUTH_CLUSTER_URL.replace(/^redis\+cluster:/, 'redis:'));
  const seed = createClient({ url: parsed.toString() });
  await seed.connect();
  const nodes = (await seed.sendCommand(['CLUSTER', 'NODES'])) as string;
  seed.destroy();
  // Each line: id, ip:port@cport, flags (e.g. `myself,master`), …
  const masters = nodes.split('\n').map((line) => line.split(' '))
    .filter((fields) => fields[2]?.split(',').includes('master'))
    .map((fields) => fields[1]!.split('@')[0]!);
  return Promise.all(masters.map(async (address) => {
    const node = createClient({ url: `redis://${parsed.username}:${parsed.password}@${address}` });
    await node.connect();
    return node;
  }));
}

describe.skipIf(!AUTH_CLUSTER_URL)('Redis Cluster with a password (README "Redis Cluster": user:password@ before the first node applies to all)', () => {
  let masters: NodeClient[] = [];
  let store: CompleteStore | null = null;

  beforeAll(async () => {
    masters = await connectMasters();
  });

  afterAll(async () => {
    await store?.close?.();
    for (const node of masters) {
      for await (const keys of node.scanIterator({ MATCH: `*${prefix}*`, COUNT: 500 })) {
        for (const key of keys) await node.del(key);
      }
      node.destroy();
    }
  });

  it('the cluster really requires the password: the same URL without it cannot open the store', async () => {
    const withoutPassword = AUTH_CLUSTER_URL.replace(/\/\/[^@/]*@/, '//');
    await expect(createStoreFromUrl(withPrefix(withoutPassword))).rejects.toThrow();
  });

  it('a store opened from a URL naming one node writes on every master, each reached with the URL\'s password', async () => {
    expect(masters.length).toBeGreaterThanOrEqual(3);
    store = await createStoreFromUrl(withPrefix(AUTH_CLUSTER_URL));
    const now = new Date();
    // Each counter is one key without a hash tag, so 60 of them land on every master.
    for (let i = 0; i < 60; i++) expect((await store.rateLimits!.hit(`spread-${i}`, 60_000, now)).count).toBe(1);
    const perMaster = await Promise.all(masters.map(async (node) => {
      let count = 0;
      for await (const keys of node.scanIterator({ MATCH: `${prefix}rl:*`, COUNT: 500 })) count += keys.length;
      return count;
    }));
    expect(perMaster.every((count) => count > 0), `counters per master: ${perMaster.join(', ')}`).toBe(true);
    expect(perMaster.reduce((a, b) => a + b, 0)).toBe(60);
  });

  it('a command on a node reached through discovery is never refused for want of a password (no NOAUTH, no 503)', async () => {
    store ??= await createStoreFromUrl(withPrefix(AUTH_CLUSTER_URL));
    const now = new Date();
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => store!.rateLimits!.get(`spread-${i}`, now)));
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as Error);
    expect(refused.map((e) => `${e.name}: ${e.message}`)).toEqual([]);
    expect(refused.some((e) => e instanceof StoreUnavailableError)).toBe(false);
  });
});
