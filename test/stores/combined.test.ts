// A combined store (integrations, consents and keys in PostgreSQL; codes and tokens in Redis) passes the contract.
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { combineStores } from '../../src/stores/combine-stores.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { runStoreConformance } from '../../src/testing/index.js';

const postgresUrl = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const redisUrl = process.env.OAUTH_TEST_REDIS_URL ?? '';
const enabled = postgresUrl !== '' && redisUrl !== '';
if (!enabled) console.info('Combined-store tests skipped: set OAUTH_TEST_POSTGRES_URL and OAUTH_TEST_REDIS_URL to run them');

let counter = 0;
const cleanup = new WeakMap<Store, { schema: string; prefix: string }>();

describe.skipIf(!enabled)('combined store: PostgreSQL clients/consents/keys + Redis codes/tokens', () => {
  const admin = enabled ? new pg.Pool({ connectionString: postgresUrl, max: 2 }) : null;
  const redisAdmin = createClient({ url: redisUrl });
  beforeAll(async () => { await redisAdmin.connect(); });
  afterAll(async () => {
    await admin?.end();
    await redisAdmin.close();
  });

  it("keeps PostgreSQL's integration copies only while its tokens are PostgreSQL's too: Redis's saves do not check their revision", async () => {
    const schema = `oauth_c${process.pid}_copies`;
    const sql = await createPostgresStore({ connectionString: postgresUrl, schema, sweepIntervalSeconds: 0 });
    const cache = await createRedisStore({ url: redisUrl, prefix: `oauth-combined:${process.pid}:copies:`, sweepIntervalSeconds: 0 });
    try {
      expect(combineStores({ clients: sql, codes: cache, tokens: cache }).clientCopies).toBeUndefined();
      expect(combineStores({ clients: sql, codes: cache, tokens: sql }).clientCopies).toBe(sql.clientCopies);
    } finally {
      await sql.close();
      await cache.close();
      await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  runStoreConformance({
    name: 'postgres+redis',
    async createStore() {
      counter += 1;
      const unique = `${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
      const sql = await createPostgresStore({ connectionString: postgresUrl, schema: `oauth_c${unique}` });
      const cache = await createRedisStore({ url: redisUrl, prefix: `oauth-combined:${unique}:` });
      const store = combineStores({ clients: sql, consents: sql, codes: cache, tokens: cache });
      cleanup.set(store, { schema: `oauth_c${unique}`, prefix: `oauth-combined:${unique}:` });
      return store;
    },
    async destroyStore(store) {
      await store.close?.();
      const names = cleanup.get(store);
      if (!names) return;
      await admin?.query(`DROP SCHEMA IF EXISTS "${names.schema}" CASCADE`);
      for await (const keys of redisAdmin.scanIterator({ MATCH: `${names.prefix}*`, COUNT: 500 })) {
        if (keys.length) await redisAdmin.del(keys);
      }
    },
  });
});
