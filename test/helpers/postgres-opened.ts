// Stores a PostgreSQL test opened on pools of its own, each in a schema of its own, and how to throw them away.
import type pg from 'pg';
import type { PostgresStore } from '../../src/stores/postgres/index.js';

/** One store the test opened: its own pool and schema. */
export interface OpenedPostgresStore {
  readonly store: PostgresStore;
  readonly pool: pg.Pool;
  readonly schema: string;
}

/** Closes every store in `opened` (emptying it), ends its pool and drops its schema through `admin`. */
export async function disposeOpened(opened: OpenedPostgresStore[], admin: pg.Pool): Promise<void> {
  for (const { store, pool, schema } of opened.splice(0)) {
    await store.close();
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}
