// PostgreSQL store: a lookup by one key is planned once per connection, and a save reads its checks by key.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { buildClient, buildCode, buildToken, buildTokenPair } from '../../src/testing/conformance-fixtures.js';

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

  it('every store call of the token endpoint, the bearer check, revocation and an integration\'s deletion reads by key, with 20,000 rows per table', async (context) => {
    // Its own connection, with auto_explain sending the plan of every statement, the save function's included,
    // back as a notice. On migration 8's function the save with a copy's revision read all 20,000 integrations.
    const notices: string[] = [];
    const one = new pg.Pool({ connectionString: url, max: 1 });
    one.on('connect', (client) => client.on('notice', (notice) => notices.push(notice.message ?? '')));
    const big = `${schema}_big`;
    const store = await createPostgresStore({ pool: one, schema: big, sweepIntervalSeconds: 0 });
    const n = 20_000;
    try {
      const { client } = buildClient();
      await store.clients.createClient(client);
      const q = (sql: string) => one.query(sql.replaceAll('$s', `"${big}"`).replaceAll('$n', String(n)));
      await q(`INSERT INTO $s.clients SELECT client_id || '-' || i, client_secret_hash, name, flow, redirect_uris,
          allowed_scopes, require_pkce, credentials_issued_at, created_at, disabled FROM $s.clients, generate_series(1, $n) i`);
      await q(`INSERT INTO $s.client_revocations SELECT 'c' || i, now(), now() + interval '1 day' FROM generate_series(1, $n) i`);
      await q(`INSERT INTO $s.user_revocations SELECT 'c' || i % 100, 'u' || i, now(), now() + interval '1 day' FROM generate_series(1, $n) i`);
      await q(`INSERT INTO $s.grants SELECT 'g' || i, CASE WHEN i % 2 = 0 THEN now() END, now() + interval '1 day' FROM generate_series(1, $n) i`);
      await q(`INSERT INTO $s.tokens SELECT 't' || i, CASE WHEN i % 2 = 0 THEN 'access' ELSE 'refresh' END, 'g' || i / 2,
          'c' || i % 1000, 'u' || i % 5000, '{}', 'https://a.example', now() + interval '1 hour' FROM generate_series(1, $n * 4) i`);
      await q(`INSERT INTO $s.codes SELECT 'k' || i, 'g' || i, 'c' || i % 1000, 'u' || i, 'https://a.example/cb', '{}', NULL,
          'https://a.example', now() + interval '10 minutes', NULL, now() FROM generate_series(1, $n) i`);
      await q(`INSERT INTO $s.consents SELECT 'u' || i % 5000, 'c' || i, '{}', now() FROM generate_series(1, $n) i`);
      await q(`INSERT INTO $s.rate_limits SELECT 'r' || i, 1, now() + interval '1 hour' FROM generate_series(1, $n) i`);
      await q('ANALYZE $s.clients, $s.client_revocations, $s.user_revocations, $s.grants, $s.tokens, $s.codes, $s.consents, $s.rate_limits');
      const revision = (await one.query<{ x: string }>(`SELECT xmin::text AS x FROM "${big}".clients WHERE client_id = $1`, [client.clientId])).rows[0]!.x;
      try {
        await q("LOAD 'auto_explain'");
      } catch (error) {
        // Loading a library from $libdir takes a superuser: on a test database without one, say so and skip.
        if ((error as { code?: string }).code !== '42501') throw error;
        console.info('PostgreSQL plan test skipped: LOAD auto_explain needs a superuser (OAUTH_TEST_POSTGRES_URL)');
        context.skip();
      }
      await q('SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice');
      const now = new Date();
      const token = () => buildToken({ clientId: client.clientId, userId: 'alice' });
      const code = buildCode({ clientId: client.clientId });
      // Each call alone, and some several at once: the store batches those into one statement of many keys.
      const calls: Record<string, () => Promise<unknown>> = {
        findClient: () => store.clients.findClient(client.clientId),
        saveCode: () => store.codes.saveCode(code),
        consumeCode: () => store.codes.consumeCode(code.codeHash),
        'consumeCode, three at once': () => Promise.all(['k5', 'k6', code.codeHash].map((hash) => store.codes.consumeCode(hash))),
        saveTokens: () => { const access = token(); return store.tokens.saveTokens(access, { ...access, tokenHash: buildToken().tokenHash }, { authorizedAt: now }); },
        'saveTokens, a copy\'s revision, newGrant': () =>
          store.tokens.saveTokens(buildToken({ clientId: client.clientId, userId: null }), null, { authorizedAt: now, clientRevision: revision, newGrant: true }),
        'saveTokens, three at once': () => Promise.all([1, 2, 3].map(() => store.tokens.saveTokens(token(), null, { authorizedAt: now, newGrant: true }))),
        findAccessToken: () => store.tokens.findAccessToken('t2'),
        'findAccessToken, three at once': () => Promise.all(['t2', 't4', 't6'].map((hash) => store.tokens.findAccessToken(hash))),
        findRefreshToken: () => store.tokens.findRefreshToken('t1'),
        revokeAccessToken: () => store.tokens.revokeAccessToken('t8'),
        revokeGrant: () => store.tokens.revokeGrant('g7'),
        'revokeClientTokens(clientId)': () => store.tokens.revokeClientTokens!('c5'),
        'revokeClientTokens(clientId, userId)': () => store.tokens.revokeClientTokens!('c6', 'u6'),
        findConsent: () => store.consents.findConsent('u1', 'c1'),
        saveConsent: () => store.consents.saveConsent({ userId: 'u1', clientId: 'c1', scope: [], grantedAt: now }),
        revokeConsent: () => store.consents.revokeConsent('u1', 'c1'),
        listConsents: () => store.consents.listConsents('u1'),
        'rateLimits.hit': () => store.rateLimits!.hit('r5', 60_000, now),
        'rateLimits.get': () => store.rateLimits!.get('r5', now),
        deleteClient: () => store.clients.deleteClient!(`${client.clientId}-7`),
      };
      for (const [name, call] of Object.entries(calls)) {
        notices.length = 0;
        await call();
        expect(notices.length, name).toBeGreaterThan(0);
        for (const plan of notices) {
          expect(plan, name).not.toMatch(/hashed SubPlan|Seq Scan on (clients|client_revocations|user_revocations|grants|tokens|codes|consents|rate_limits)\b/);
        }
      }
    } finally {
      await store.close();
      await one.query(`DROP SCHEMA IF EXISTS "${big}" CASCADE`);
      await one.end();
    }
  });
});
