// PostgreSQL store on a host pool whose type parsers are not pg's defaults: the conformance suite still holds.
import pg from 'pg';
import { describe } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { runStoreConformance } from '../../src/testing/index.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';

/**
 * What a host may set for its own queries (the pool's `types`, or `pg.types.setTypeParser` globally): every
 * column as the text PostgreSQL sent, a common choice for timestamps kept as strings. The store must not read
 * its records through them.
 */
const RAW_TEXT = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig;

const poolOf = new WeakMap<Store, pg.Pool>();
const schemaOf = new WeakMap<Store, string>();
let counter = 0;

describe.skipIf(!url)('PostgreSQL store, host pool with raw-text type parsers', () => {
  runStoreConformance({
    name: 'postgres (host pool, raw-text type parsers)',
    async createStore() {
      counter += 1;
      const schema = `oauth_types${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
      const pool = new pg.Pool({ connectionString: url, types: RAW_TEXT, connectionTimeoutMillis: 5000 });
      const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
      poolOf.set(store, pool);
      schemaOf.set(store, schema);
      return store;
    },
    async destroyStore(store: Store) {
      await store.close?.();
      const pool = poolOf.get(store);
      await pool?.query(`DROP SCHEMA IF EXISTS "${schemaOf.get(store) ?? 'never_created'}" CASCADE`);
      await pool?.end();
    },
  });
});
