// The test Redis Cluster (OAUTH_TEST_REDIS_CLUSTER_NODES): its nodes, per-node admin clients, and the slot rule.
import { createClient } from 'redis';

/** `127.0.0.1:7000,127.0.0.1:7001,…` as set by .ci/run (.ci/redis-cluster.sh); empty when unset. */
export const CLUSTER_NODES: readonly string[] = (process.env.OAUTH_TEST_REDIS_CLUSTER_NODES ?? '')
  .split(',')
  .map((n) => n.trim())
  .filter((n) => n !== '');

/** `redis://host:port` of each listed node, as `createRedisStore({ cluster: { rootNodes } })` takes them. */
export const CLUSTER_ROOT_NODES: readonly string[] = CLUSTER_NODES.map((n) => `redis://${n}`);

/** The store URL naming the cluster, as OAUTH_STORE would. */
export function clusterStoreUrl(prefix: string): string {
  return `redis+cluster://${CLUSTER_NODES.join(',')}?prefix=${encodeURIComponent(prefix)}`;
}

/** CRC16/XMODEM, the checksum Redis Cluster maps keys to slots with. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * The slot of a key, computed locally by the cluster spec's rule: only the part between the first `{` and
 * the next `}` is hashed, when that part is not empty.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  let hashed = key;
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) hashed = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(hashed, 'utf8')) % 16384;
}

type NodeClient = ReturnType<typeof createClient>;

/** One plain client per listed node (masters): for SCAN, DBSIZE and CLUSTER commands, as an operator would. */
export async function connectNodes(): Promise<NodeClient[]> {
  return Promise.all(CLUSTER_ROOT_NODES.map(async (url) => {
    const client = createClient({ url });
    await client.connect();
    return client;
  }));
}

/** The keys each node holds that contain `prefix` (cluster keys begin with `{prefix` or `prefix`). */
export async function keysPerNode(nodes: readonly NodeClient[], prefix: string): Promise<string[][]> {
  return Promise.all(nodes.map(async (node) => {
    const all: string[] = [];
    for await (const batch of node.scanIterator({ MATCH: `*${prefix}*`, COUNT: 500 })) all.push(...batch);
    return all.sort();
  }));
}

/** Deletes a prefix's keys on every node, one key per DEL (keys of several slots cannot share one). */
export async function wipeClusterPrefix(nodes: readonly NodeClient[], prefix: string): Promise<void> {
  const perNode = await keysPerNode(nodes, prefix);
  await Promise.all(perNode.map((keys, i) => Promise.all(keys.map((k) => nodes[i]!.del(k)))));
}
