// PostgreSQL, Redis and Redis Cluster stores for the bench: each run in its own schema or key prefix, removed afterwards.
import { randomBytes } from 'node:crypto';

export const DEFAULT_POSTGRES_URL = process.env.OAUTH_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_REDIS_URL = process.env.OAUTH_BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
/** `host:port,host:port` of some of a Redis Cluster's nodes (the test cluster's when the bench's is not set). */
export const DEFAULT_REDIS_CLUSTER_NODES = process.env.OAUTH_BENCH_REDIS_CLUSTER_NODES || process.env.OAUTH_TEST_REDIS_CLUSTER_NODES || '127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';

/** The listed nodes of a cluster (`host:port,…`), each as a `redis://` URL. */
export const clusterNodeUrls = (nodes) => nodes.split(',').map((node) => node.trim()).filter(Boolean).map((node) => `redis://${node}`);

/** A schema or key-prefix name no other run uses. */
export function benchName(kind) {
  return `bench_${kind}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Drops a bench schema (never anything not named by benchName). */
export async function dropPostgresSchema(url, schema) {
  if (!/^bench_[a-z]+_\d+_[0-9a-f]{8}$/.test(schema)) throw new Error(`refusing to drop schema ${schema}: not a bench schema`);
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Deletes every key under a bench prefix (SCAN + UNLINK, never KEYS). */
export async function deleteRedisPrefix(url, prefix) {
  if (!/^bench_[a-z]+_\d+_[0-9a-f]{8}:$/.test(prefix)) throw new Error(`refusing to delete keys under ${prefix}: not a bench prefix`);
  const { createClient } = await import('redis');
  const client = createClient({ url });
  await client.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.sendCommand(['SCAN', cursor, 'MATCH', `${prefix}*`, 'COUNT', '10000']);
      cursor = next;
      if (keys.length > 0) await client.sendCommand(['UNLINK', ...keys]);
    } while (cursor !== '0');
  } finally {
    await closeClient(client);
  }
}

/**
 * How many keys under `prefix` match `pattern` (a glob after the prefix, e.g. `rl:*`), by SCAN on each of `urls`
 * (one Redis, or a cluster's masters: on a cluster a key starts with the prefix or with `{` and the prefix).
 */
export async function countRedisKeys(urls, prefix, pattern = '*') {
  const { createClient } = await import('redis');
  let total = 0;
  for (const url of urls) {
    const client = createClient({ url });
    await client.connect();
    try {
      for (const match of urls.length > 1 ? [`${prefix}${pattern}`, `{${prefix}${pattern}`] : [`${prefix}${pattern}`]) {
        let cursor = '0';
        do {
          const [next, keys] = await client.sendCommand(['SCAN', cursor, 'MATCH', match, 'COUNT', '10000']);
          cursor = next;
          total += keys.length;
        } while (cursor !== '0');
      }
    } finally {
      await closeClient(client);
    }
  }
  return total;
}

/** Deletes every key under a bench prefix on each master of a cluster (SCAN per node, then one UNLINK per key: keys of several slots cannot share one). */
export async function deleteRedisClusterPrefix(urls, prefix) {
  if (!/^bench_[a-z]+_\d+_[0-9a-f]{8}:$/.test(prefix)) throw new Error(`refusing to delete keys under ${prefix}: not a bench prefix`);
  const { createClient } = await import('redis');
  for (const url of urls) {
    const client = createClient({ url });
    await client.connect();
    try {
      for (const match of [`${prefix}*`, `{${prefix}*`]) {
        let cursor = '0';
        do {
          const [next, keys] = await client.sendCommand(['SCAN', cursor, 'MATCH', match, 'COUNT', '10000']);
          cursor = next;
          for (const key of keys) await client.sendCommand(['UNLINK', key]);
        } while (cursor !== '0');
      }
    } finally {
      await closeClient(client);
    }
  }
}

/**
 * The PostgreSQL store in `schema`, or in a fresh schema dropped at cleanup when none is given.
 * @param {Array<() => Promise<void>>} cleanups run in reverse order: the store closes before its schema goes
 */
export async function openPostgresStore(url, schema, storeOptions, cleanups) {
  const { createPostgresStore } = await import('express-oauth-router/stores/postgres');
  const owned = !schema;
  const name = schema ?? benchName('pg');
  if (owned) cleanups.push(() => dropPostgresSchema(url, name));
  const store = await createPostgresStore({ connectionString: url, schema: name, logger: quietLogger, ...storeOptions });
  cleanups.push(() => store.close());
  return store;
}

/** The Redis store under `prefix`, or under a fresh prefix whose keys are deleted at cleanup. */
export async function openRedisStore(url, prefix, cleanups) {
  const { createRedisStore } = await import('express-oauth-router/stores/redis');
  const owned = !prefix;
  const name = prefix ?? `${benchName('redis')}:`;
  if (owned) cleanups.push(() => deleteRedisPrefix(url, name));
  const store = await createRedisStore({ url, prefix: name, logger: quietLogger });
  cleanups.push(() => store.close());
  return store;
}

/** The Redis store on a cluster (`host:port,…` of its nodes) under `prefix`, or under a fresh prefix deleted at cleanup. */
export async function openRedisClusterStore(nodes, prefix, cleanups) {
  const { createRedisStore } = await import('express-oauth-router/stores/redis');
  const owned = !prefix;
  const name = prefix ?? `${benchName('cluster')}:`;
  const rootNodes = clusterNodeUrls(nodes);
  if (owned) cleanups.push(() => deleteRedisClusterPrefix(rootNodes, name));
  const store = await createRedisStore({ cluster: { rootNodes }, prefix: name, logger: quietLogger });
  cleanups.push(() => store.close());
  return store;
}

/** node-redis v5's close, or v4's quit. */
const closeClient = (client) => (typeof client.close === 'function' ? client.close() : client.quit());

// Stopping the child closes connections under load: those warnings are not findings.
const quietLogger = { warn: () => {} };
