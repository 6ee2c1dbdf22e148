// PostgreSQL and Redis stores for the bench: each run in its own schema or key prefix, removed afterwards.
import { randomBytes } from 'node:crypto';

export const DEFAULT_POSTGRES_URL = process.env.OAUTH_BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_REDIS_URL = process.env.OAUTH_BENCH_REDIS_URL || 'redis://127.0.0.1:6379';

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
    if (typeof client.close === 'function') await client.close();
    else await client.quit();
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

// Stopping the child closes connections under load: those warnings are not findings.
const quietLogger = { warn: () => {} };
