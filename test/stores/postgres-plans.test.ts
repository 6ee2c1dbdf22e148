// PostgreSQL store: a lookup by one key is planned once per connection, not on every execution.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { buildClient, buildTokenPair } from '../../src/testing/conformance-fixtures.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL plan tests skipped: set OAUTH_TEST_POSTGRES_URL to run them');

interface PlanCounts {
  readonly statement: string;
  readonly generic: number;
  readonly custom: number;
}

describe.skipIf(!url)('PostgreSQL store, prepared statements (DESIGN §3a: statements prepared once)', () => {
  // One connection, so that pg_prepared_statements (per session) shows every statement the store prepared.
  const pool = url ? new pg.Pool({ connectionString: url, max: 1 }) : null;
  const schema = `oauth_p${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  async function plans(fragment: string): Promise<PlanCounts> {
    const { rows } = await pool!.query<{ statement: string; generic: string; custom: string }>(
      `SELECT statement, generic_plans::text AS generic, custom_plans::text AS custom
       FROM pg_prepared_statements WHERE statement LIKE '%' || $1 || '%'`,
      [fragment],
    );
    expect(rows).toHaveLength(1);
    return { statement: rows[0]!.statement, generic: Number(rows[0]!.generic), custom: Number(rows[0]!.custom) };
  }

  it('integration and token lookups of one key keep their generic plan (no planning per request)', async () => {
    const store = await createPostgresStore({ pool: pool!, schema, sweepIntervalSeconds: 0 });
    try {
      const { client } = buildClient();
      await store.clients.createClient(client);
      const { access, refresh } = buildTokenPair({ clientId: client.clientId });
      expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
      for (let i = 0; i < 12; i += 1) {
        expect(await store.clients.findClient(client.clientId)).toEqual(client);
        expect(await store.tokens.findAccessToken(access.tokenHash)).toEqual(access);
        expect(await store.tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
      }
      // PostgreSQL plans a prepared statement for its values five times, then keeps the generic plan if it
      // costs no more. An `= ANY($1)` of one key never qualifies: 12 custom plans, 0 generic.
      for (const fragment of ['WHERE client_id = $1', "token_hash = $1 AND kind = 'access'", "token_hash = $1 AND kind = 'refresh'"]) {
        const counts = await plans(fragment);
        expect(counts.custom, counts.statement).toBeLessThanOrEqual(5);
        expect(counts.generic, counts.statement).toBeGreaterThanOrEqual(7);
      }
    } finally {
      await store.close();
    }
  });
});
