// PostgreSQL store: a lookup by one key is planned once per connection, and a save reads its checks by key.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { buildClient, buildToken, buildTokenPair } from '../../src/testing/conformance-fixtures.js';

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

  it('a save reads its refusals by key, never scanning a table, with 20,000 integrations, tombstones and grants', async () => {
    // Its own connection, with auto_explain sending the plan of every statement, the save function's included,
    // back as a notice.
    const notices: string[] = [];
    const one = new pg.Pool({ connectionString: url, max: 1 });
    one.on('connect', (client) => client.on('notice', (notice) => notices.push(notice.message ?? '')));
    const scanSchema = `${schema}_scan`;
    const store = await createPostgresStore({ pool: one, schema: scanSchema, sweepIntervalSeconds: 0 });
    try {
      const { client } = buildClient({ flow: 'client_credentials' });
      await store.clients.createClient(client);
      const q = (sql: string) => one.query(sql.replaceAll('$s', `"${scanSchema}"`));
      await q(`INSERT INTO $s.clients SELECT client_id || '-' || i, client_secret_hash, name, flow, redirect_uris,
          allowed_scopes, require_pkce, credentials_issued_at, created_at, disabled FROM $s.clients, generate_series(1, 20000) i`);
      await q(`INSERT INTO $s.client_revocations SELECT 'c' || i, now(), now() + interval '1 day' FROM generate_series(1, 20000) i`);
      await q(`INSERT INTO $s.user_revocations SELECT 'c' || i % 100, 'u' || i, now(), now() + interval '1 day' FROM generate_series(1, 20000) i`);
      await q(`INSERT INTO $s.grants SELECT 'g' || i, now(), now() + interval '1 day' FROM generate_series(1, 20000) i`);
      await q('ANALYZE $s.clients, $s.client_revocations, $s.user_revocations, $s.grants');
      const revision = (await one.query<{ x: string }>(`SELECT xmin::text AS x FROM "${scanSchema}".clients WHERE client_id = $1`, [client.clientId])).rows[0]!.x;
      await q("LOAD 'auto_explain'");
      await q('SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice');
      const machine = buildToken({ clientId: client.clientId, userId: null });
      expect(await store.tokens.saveTokens(machine, null, { authorizedAt: new Date(), clientRevision: revision, newGrant: true })).toBe(true);
      const { access, refresh } = buildTokenPair({ clientId: client.clientId, userId: 'u-1' });
      expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
      const plans = notices.filter((notice) => notice.includes('v_refused') || notice.includes('INTO v_refused') || /client_revocations|user_revocations/.test(notice));
      expect(plans.length, notices.join('\n---\n')).toBeGreaterThan(0);
      for (const plan of plans) {
        expect(plan).not.toMatch(/hashed SubPlan|Seq Scan on (clients|client_revocations|user_revocations|grants)\b/);
      }
    } finally {
      await store.close();
      await one.query(`DROP SCHEMA IF EXISTS "${scanSchema}" CASCADE`);
      await one.end();
    }
  });
});
