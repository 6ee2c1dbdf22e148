// Redis store on a Redis Cluster: the conformance suite, the slot layout (scripts in one slot, counters spread).
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdministrationStore, Store } from '../../src/stores/contract.js';
import { createStoreFromUrl } from '../../src/stores/from-url.js';
import { createRedisKeys } from '../../src/stores/redis/codec.js';
import { parseRedisClusterUrl } from '../../src/stores/redis/cluster-url.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { buildCode, buildToken } from '../../src/testing/conformance-fixtures.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { untilServing } from '../helpers/store-races.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import {
  CLUSTER_NODES,
  CLUSTER_ROOT_NODES,
  clusterStoreUrl,
  connectNodes,
  keySlot,
  keysPerNode,
  wipeClusterPrefix,
} from '../helpers/redis-cluster.js';

if (CLUSTER_NODES.length === 0) {
  console.info('Redis Cluster tests skipped: run .ci/redis-cluster.sh and set OAUTH_TEST_REDIS_CLUSTER_NODES=127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002');
}

let counter = 0;
/** A key prefix no other test (or parallel test file) uses, so every store starts empty. */
function freshPrefix(): string {
  counter += 1;
  return `oauth-ctest:${process.pid}:${counter}:${Math.random().toString(36).slice(2, 8)}:`;
}

/** Awkward ids: separators, braces (which must never become a hash tag), non-ASCII, a lone surrogate. */
const IDS = ['plain', 'a:b', '{x}', 'x}{y', 'ünï', '\ud800', ''];

const slotsOf = (keys: readonly string[]): Set<number> => new Set(keys.map(keySlot));

describe('Redis Cluster key layout (computed with the CRC16 slot rule)', () => {
  const prefix = 'oauth:';
  const k = createRedisKeys(prefix, true);

  it('every key a token script touches (SAVE_TOKENS, REVOKE_GRANT, START_REVOCATION, DRAIN_CHUNK, CLAIM_DRAIN, FIND_UNDRAINED) is in one slot', () => {
    const family: string[] = [];
    for (const a of IDS) {
      for (const b of IDS) {
        family.push(
          k.accessToken(`hash-${a}`), k.refreshToken(`hash-${b}`), k.grantIndex(a), k.revokedGrant(a),
          k.clientIndex(a), k.userIndex(a, b), k.clientRevokedAt(a), k.userRevokedAt(a, b),
          ...k.drainingSets(k.clientIndex(a)), ...k.drainingSets(k.userIndex(a, b)), k.drains, k.drainMarker,
        );
      }
    }
    expect(slotsOf(family).size).toBe(1);
  });

  it('createClient and deleteClient touch one slot (the record and the list); each user\'s consents are one slot', () => {
    expect(slotsOf(IDS.flatMap((id) => [k.client(id), k.clientList])).size).toBe(1);
    for (const user of IDS) {
      expect(slotsOf([k.consentList(user), ...IDS.map((c) => k.consent(user, c))]).size, user).toBe(1);
    }
  });

  it('families are on slots of their own, and so are the token families of two prefixes', () => {
    const other = createRedisKeys('tenant-b:', true);
    const slots = [k.accessToken('h'), k.clientList, k.consentList('alice'), other.accessToken('h')].map(keySlot);
    expect(new Set(slots).size).toBe(4);
  });

  it('codes carry no tag: the codes of many hashes spread over many slots', () => {
    const slots = slotsOf(Array.from({ length: 100 }, (_, i) => k.code(`code-hash-${i}`)));
    expect(slots.size).toBeGreaterThan(90);
  });

  it('the plain-Redis layout is unchanged (no hash tags added), so running deployments keep their data', () => {
    const plain = createRedisKeys(prefix);
    expect([plain.accessToken('h'), plain.client('c'), plain.consent('u', 'c'), plain.clientRevokedAt('c')])
      .toEqual(['oauth:at:h', 'oauth:client:c', 'oauth:consent:u:c', 'oauth:revoked-client:{c}']);
  });

  it('redis+cluster:// URLs list nodes and keep credentials and the prefix', () => {
    expect(parseRedisClusterUrl('redis+cluster://u:p@10.0.0.1:7000,10.0.0.2:7001?prefix=t%3A')).toEqual({
      rootNodes: ['redis://u:p@10.0.0.1:7000', 'redis://u:p@10.0.0.2:7001'],
      prefix: 't:',
    });
    expect(() => parseRedisClusterUrl('redis+cluster://10.0.0.1')).toThrow(/host:port/);
  });

  it('a prefix with a brace is refused on a cluster, before any connection', async () => {
    await expect(createRedisStore({ cluster: { rootNodes: ['redis://127.0.0.1:1'] }, prefix: 'a{b}:' }))
      .rejects.toThrow(/must not contain/);
  });
});

describe.skipIf(CLUSTER_NODES.length === 0)('Redis store on a three-master Redis Cluster', () => {
  let nodes: Awaited<ReturnType<typeof connectNodes>> = [];
  const prefixOf = new WeakMap<Store, string>();
  const logger = { warn: () => undefined };

  async function openStore(prefix = freshPrefix()): Promise<AdministrationStore> {
    const store = (await createRedisStore({
      cluster: { rootNodes: CLUSTER_ROOT_NODES }, prefix, commandTimeoutMs: 2000, logger,
    })) as AdministrationStore;
    prefixOf.set(store, prefix);
    return store;
  }

  beforeAll(async () => {
    // Set but unreachable fails here, loudly, rather than skipping.
    nodes = await connectNodes();
    for (const node of nodes) expect(await node.sendCommand(['CLUSTER', 'INFO'])).toMatch(/cluster_state:ok/);
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.close()));
  });

  // Each conformance store reaches every node through a fault proxy of its own (nodeAddressMap sends the
  // addresses the cluster announces there), so the outage rule can cut the whole cluster off.
  const proxiesOf = new WeakMap<Store, FaultProxy[]>();
  runStoreConformance({
    name: 'redis-cluster',
    async createStore() {
      const proxies = await Promise.all(CLUSTER_NODES.map((n) => {
        const [host = '', port = ''] = n.split(':');
        return startFaultProxy({ host, port: Number(port) });
      }));
      const nodeAddressMap = Object.fromEntries(CLUSTER_NODES.map((n, i) => [n, { host: '127.0.0.1', port: proxies[i]!.port }]));
      const prefix = freshPrefix();
      const store = (await createRedisStore({
        cluster: { rootNodes: proxies.map((p) => `redis://127.0.0.1:${p.port}`), nodeAddressMap },
        prefix, commandTimeoutMs: 2000, logger,
      })) as AdministrationStore;
      prefixOf.set(store, prefix);
      proxiesOf.set(store, proxies);
      return store;
    },
    // Another instance on the same prefix, connected to the nodes directly: its revocations reach the store by pub/sub only.
    openPeer: (store) => openStore(prefixOf.get(store)!),
    // The peer connects directly, past the proxy the outage hook cuts: it can revoke during the outage.
    outageSparesPeer: true,
    async destroyStore(store: Store) {
      await store.close?.();
      await Promise.all((proxiesOf.get(store) ?? []).map((p) => p.close()));
      await wipeClusterPrefix(nodes, prefixOf.get(store) ?? 'never-matches:');
    },
    async simulateOutage(store: Store) {
      const proxies = proxiesOf.get(store);
      if (!proxies) throw new Error('simulateOutage: not a store of this suite');
      for (const p of proxies) p.setMode('down');
      return async () => {
        for (const p of proxies) p.setMode('up');
        await untilServing(store);
      };
    },
  } as Parameters<typeof runStoreConformance>[0]);

  it('the server agrees with the local slot rule (CLUSTER KEYSLOT)', async () => {
    const keys = createRedisKeys('oauth:', true);
    for (const key of [keys.accessToken('h'), keys.userRevokedAt('a:b', '{x}'), keys.code('c'), keys.consent('ü', 'c')]) {
      expect(Number(await nodes[0]!.sendCommand(['CLUSTER', 'KEYSLOT', key])), key).toBe(keySlot(key));
    }
  });

  it('rate-limit counters and codes spread over all three masters; the token family stays on one', async () => {
    const prefix = freshPrefix();
    const store = await openStore(prefix);
    try {
      const now = new Date();
      for (let i = 0; i < 30; i++) {
        await store.rateLimits!.hit(`login:ip:10.0.0.${i}`, 60_000, now);
        await store.codes.saveCode(buildCode({ codeHash: `code-hash-${i}`, issuedAt: now }));
        await store.tokens.saveTokens(buildToken({ tokenHash: `token-hash-${i}`, clientId: `client-${i % 3}` }), null, { authorizedAt: now });
      }
      const perNode = await keysPerNode(nodes, prefix);
      for (const keys of perNode) {
        expect(keys.some((key) => key.startsWith(`${prefix}rl:`))).toBe(true);
        expect(keys.some((key) => key.startsWith(`${prefix}code:`))).toBe(true);
      }
      const tokenNodes = perNode.filter((keys) => keys.some((key) => key.startsWith(`{${prefix}tokens}at:`)));
      expect(tokenNodes).toHaveLength(1);
      expect(tokenNodes[0]!.filter((key) => key.startsWith(`{${prefix}tokens}at:`))).toHaveLength(30);
    } finally {
      await store.close?.();
      await wipeClusterPrefix(nodes, prefix);
    }
  });

  it('a script evicted from every master (SCRIPT FLUSH) is loaded again on the master that runs it', async () => {
    const prefix = freshPrefix();
    const store = await openStore(prefix);
    try {
      const now = new Date();
      await store.rateLimits!.hit('warm', 60_000, now);
      await Promise.all(nodes.map((n) => n.sendCommand(['SCRIPT', 'FLUSH'])));
      for (let i = 0; i < 12; i++) expect((await store.rateLimits!.hit(`key-${i}`, 60_000, now)).count).toBe(1);
      expect(await store.tokens.saveTokens(buildToken({ tokenHash: 'after-flush' }), null, { authorizedAt: now })).toBe(true);
      expect(await store.tokens.findAccessToken('after-flush')).not.toBeNull();
    } finally {
      await store.close?.();
      await wipeClusterPrefix(nodes, prefix);
    }
  });

  it('a host-owned cluster client (clusterClient) serves the store, stays open after close(), and gives no feed', async () => {
    const prefix = freshPrefix();
    const cluster = createCluster({ rootNodes: CLUSTER_ROOT_NODES.map((url) => ({ url })) });
    await cluster.connect();
    try {
      const store = await createRedisStore({ clusterClient: cluster, prefix, logger });
      expect(store.revocations).toBeUndefined();
      const access = buildToken({ tokenHash: 'host-client' });
      expect(await store.tokens.saveTokens(access, null, { authorizedAt: new Date() })).toBe(true);
      expect(await store.tokens.findAccessToken('host-client')).toEqual(access);
      await store.close?.();
      expect(cluster.isOpen).toBe(true);
    } finally {
      await cluster.close();
      await wipeClusterPrefix(nodes, prefix);
    }
  });

  it('createStoreFromUrl opens the cluster from redis+cluster://host:port,host:port?prefix=…', async () => {
    const prefix = freshPrefix();
    const store = await createStoreFromUrl(clusterStoreUrl(prefix));
    try {
      await store.tokens.saveTokens(buildToken({ tokenHash: 'from-url' }), null, { authorizedAt: new Date() });
      const perNode = await keysPerNode(nodes, prefix);
      expect(perNode.flat()).toContain(`{${prefix}tokens}at:from-url`);
    } finally {
      await store.close?.();
      await wipeClusterPrefix(nodes, prefix);
    }
  });
});
