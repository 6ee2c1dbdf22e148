// requireBearer's token cache on a Redis Cluster: a revocation by another instance reaches subscribers on every node.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { countingHost, type CountingHost, crossInstanceRevocationCases, untilNotified, useUntilCached } from '../helpers/bearer-cache.js';
import { CLUSTER_NODES, CLUSTER_ROOT_NODES, connectNodes, wipeClusterPrefix } from '../helpers/redis-cluster.js';
import { clientCredentialsToken, revoke } from '../helpers/token-requests.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import type { CompleteStore, RevocationMark } from '../../src/stores/contract.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let counter = 0;
function freshPrefix(): string {
  counter += 1;
  return `oauth-ctest-cache:${process.pid}:${counter}:${Math.random().toString(36).slice(2, 8)}:`;
}

let nodes: Awaited<ReturnType<typeof connectNodes>> = [];

/** A store on the cluster whose feed subscribes on node `first` (its subscriber takes the first root node). */
async function openStore(prefix: string, first = 0): Promise<CompleteStore> {
  const rootNodes = [...CLUSTER_ROOT_NODES.slice(first), ...CLUSTER_ROOT_NODES.slice(0, first)];
  const store = await createRedisStore({ cluster: { rootNodes }, prefix, commandTimeoutMs: 2000, logger: { warn: () => undefined } });
  cleanups.push(() => store.close?.());
  return store;
}

/** Instance A (serving, caching) and instance B (revoking), two cluster stores on one prefix. */
async function twoInstances(): Promise<{ a: CountingHost; b: TestApp; storeB: CompleteStore; prefix: string }> {
  const prefix = freshPrefix();
  cleanups.push(() => wipeClusterPrefix(nodes, prefix));
  const a = await countingHost(await openStore(prefix, 0));
  const storeB = await openStore(prefix, 1);
  return { a, b: await createTestApp({}, storeB), storeB, prefix };
}

describe.skipIf(CLUSTER_NODES.length === 0)('requireBearer cache on a Redis Cluster, revoked by another instance (RFC 6750 §3.1, RFC 7009 §2.1)', () => {
  beforeAll(async () => {
    nodes = await connectNodes();
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  crossInstanceRevocationCases(twoInstances);

  it('a revocation is heard by caching instances subscribed on each of the three masters', async () => {
    const prefix = freshPrefix();
    cleanups.push(() => wipeClusterPrefix(nodes, prefix));
    const hosts = await Promise.all([0, 1, 2].map(async (first) => countingHost(await openStore(prefix, first))));
    const revoker = await createTestApp({}, await openStore(prefix, 0));
    const [first] = hosts;
    const token = await clientCredentialsToken(first!.app, first!.credentialsClient);
    const marks: RevocationMark[] = [];
    for (const host of hosts) marks.push(await useUntilCached(host, token));
    expect((await revoke(revoker.app, first!.credentialsClient, { token })).status).toBe(200);
    await Promise.all(hosts.map((host, i) => untilNotified(host, marks[i]!)));
    for (const [i, host] of hosts.entries()) expect(host.feed.mark(), `host ${i}`).not.toBe(marks[i]);
  });
});
