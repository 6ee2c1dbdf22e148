// PostgreSQL store: the conformance suite plus what only a shared database shows (migrations, races, outages).
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store, TokenRecord } from '../../src/stores/contract.js';
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from '../../src/stores/postgres/index.js';
import { createPostgresTables, migratePostgresSchema } from '../../src/stores/postgres/schema.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildToken, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL store tests skipped: set OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test to run them');

/** Rounds of each cross-instance race: every round must leave nothing of what was revoked. */
const RACE_ROUNDS = 40;

let counter = 0;
/** A schema name no other test (or parallel test file) uses, so every store starts empty. */
function freshSchema(): string {
  counter += 1;
  return `oauth_t${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

const admin = url ? new pg.Pool({ connectionString: url, max: 4 }) : null;
const schemaOf = new WeakMap<Store, string>();
const proxyOf = new WeakMap<Store, FaultProxy>();
const now = () => new Date();

async function dropSchema(schema: string): Promise<void> {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

async function openStore(schema = freshSchema(), extra: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
  const store = await createPostgresStore({ connectionString: url, schema, sweepIntervalSeconds: 0, ...extra });
  schemaOf.set(store, schema);
  return store;
}

/** `url` with its host and port replaced by the proxy's. */
function viaProxy(proxy: FaultProxy): string {
  const address = new URL(url);
  address.host = `127.0.0.1:${proxy.port}`;
  return address.href;
}

async function startProxy(): Promise<FaultProxy> {
  const target = new URL(url);
  return startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
}

/** Two instances (two pools) on one schema, closed and dropped after `body`. */
async function withTwoInstances(body: (a: PostgresStore, b: PostgresStore) => Promise<void>): Promise<void> {
  const schema = freshSchema();
  const [a, b] = [await openStore(schema), await openStore(schema)];
  try {
    await body(a, b);
  } finally {
    await Promise.all([a.close(), b.close()]);
    await dropSchema(schema);
  }
}

/** Resolves once `store` answers again after an outage (its pool reconnects on the next call). */
async function untilServing(store: Store): Promise<void> {
  for (let deadline = Date.now() + 10_000; ; ) {
    try {
      await store.clients.findClient('readiness-probe');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/**
 * Saves token pairs on `store` from four concurrent workers, each saving one pair after another, from before
 * `revoke` (run on another instance) starts until it has settled, so that saves land before, between and
 * after its statements. Resolves every token tried and how many saves were accepted and refused.
 */
async function saveWhile(
  store: Store,
  revoke: () => Promise<void>,
  make: () => { access: TokenRecord; refresh: TokenRecord | null },
  authorizedAt: Date,
): Promise<{ tried: TokenRecord[]; accepted: number; refused: number }> {
  const tried: TokenRecord[] = [];
  let accepted = 0;
  let refused = 0;
  const save = async (): Promise<void> => {
    const { access, refresh } = make();
    tried.push(access, ...(refresh ? [refresh] : []));
    if (await store.tokens.saveTokens(access, refresh, { authorizedAt })) accepted += 1;
    else refused += 1;
  };
  let settled = false;
  const first = Array.from({ length: 4 }, () => save());
  const revocation = revoke().finally(() => {
    settled = true;
  });
  await Promise.all(
    first.map(async (started) => {
      await started;
      while (!settled) await save();
    }),
  );
  await revocation;
  return { tried, accepted, refused };
}

/** Every token in `tokens` reads as absent on both instances. */
async function expectAllGone(stores: readonly Store[], tokens: readonly TokenRecord[]): Promise<void> {
  for (const store of stores) {
    const found = await Promise.all(
      tokens.flatMap((t) => [store.tokens.findAccessToken(t.tokenHash), store.tokens.findRefreshToken(t.tokenHash)]),
    );
    expect(found.filter((r) => r !== null)).toEqual([]);
  }
}

describe.skipIf(!url)('PostgreSQL store', () => {
  afterAll(async () => {
    await admin?.end();
  });

  // Every conformance store talks to PostgreSQL through its own fault proxy, so the outage rule can cut it
  // off: the proxy drops every open connection and black-holes new ones, so each call fails by the store's
  // own timeout (queryTimeoutMs, 2 s here: the outage rule makes its calls all at once).
  runStoreConformance({
    name: 'postgres',
    async createStore() {
      const proxy = await startProxy();
      const store = await openStore(freshSchema(), { connectionString: viaProxy(proxy), queryTimeoutMs: 2000 });
      proxyOf.set(store, proxy);
      return store;
    },
    async destroyStore(store: Store) {
      await store.close?.();
      await proxyOf.get(store)?.close();
      await dropSchema(schemaOf.get(store) ?? 'never_created');
    },
    async simulateOutage(store: Store) {
      const proxy = proxyOf.get(store);
      if (!proxy) throw new Error('simulateOutage: not a store of this suite');
      proxy.setMode('down');
      proxy.setMode('hang');
      return async () => {
        proxy.setMode('up');
        await untilServing(store);
      };
    },
  } as Parameters<typeof runStoreConformance>[0]);

  describe('schema', () => {
    it('three stores migrating the same new schema at once all succeed, and each version is applied once', async () => {
      const schema = freshSchema();
      try {
        const stores = await Promise.all([openStore(schema), openStore(schema), openStore(schema)]);
        const { rows } = await admin!.query(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
        expect(rows.map((r: { version: number }) => r.version)).toEqual([1, 2, 3]);
        await Promise.all(stores.map((s) => s.close()));
        // Idempotent: a restart against the migrated schema changes nothing.
        const again = await openStore(schema);
        await again.close();
      } finally {
        await dropSchema(schema);
      }
    });

    it('upgrading from version 2 gives an old code issuedAt = expiresAt − 10 minutes, and makes ids byte-exact', async () => {
      const schema = freshSchema();
      const client = await admin!.connect();
      const expiresAt = new Date(Date.now() + 300_000);
      try {
        await migratePostgresSchema(client, createPostgresTables(schema, ''), `test:${schema}`, '', 2);
        await client.query(
          `INSERT INTO "${schema}".codes (code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge, issuer, expires_at)
           VALUES ('old-code', 'g', 'c', 'u', 'https://app.example.com/cb', '{}', NULL, 'https://auth.example.com', $1)`,
          [expiresAt],
        );
      } finally {
        client.release();
      }
      const store = await openStore(schema);
      try {
        const result = await store.codes.consumeCode('old-code');
        expect(result.kind === 'consumed' && result.record.issuedAt).toEqual(new Date(expiresAt.getTime() - 600_000));
        const { rows } = await admin!.query(
          `SELECT DISTINCT collation_name FROM information_schema.columns
           WHERE table_schema = $1 AND (column_name LIKE '%\\_id' OR column_name IN ('code_hash', 'token_hash', 'kid'))`,
          [schema],
        );
        expect(rows).toEqual([{ collation_name: 'C' }]);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });
  });

  describe('across instances', () => {
    it('of 50 concurrent consumeCode calls spread over two instances exactly one wins', async () => {
      await withTwoInstances(async (a, b) => {
        const code = buildCode();
        await a.codes.saveCode(code);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).codes.consumeCode(code.codeHash)),
        );
        expect(results.filter((r) => r.kind === 'consumed')).toHaveLength(1);
        expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(49);
      });
    });

    it('what one instance writes, another reads; a revocation on one is seen by the other', async () => {
      await withTwoInstances(async (a, b) => {
        const { client } = buildClient();
        expect(await a.clients.createClient(client)).toBe(true);
        expect(await b.clients.createClient(client)).toBe(false);
        expect(await b.clients.findClient(client.clientId)).toEqual(client);
        const access = buildToken();
        expect(await a.tokens.saveTokens(access, null, { authorizedAt: now() })).toBe(true);
        expect(await b.tokens.findAccessToken(access.tokenHash)).toEqual(access);
        await b.tokens.revokeGrant(access.grantId);
        expect(await a.tokens.findAccessToken(access.tokenHash)).toBeNull();
        expect(await a.tokens.saveTokens(buildToken({ grantId: access.grantId }), null, { authorizedAt: now() })).toBe(false);
      });
    });

    it('a disable and a secret rotation racing on two instances both take effect', async () => {
      await withTwoInstances(async (a, b) => {
        for (let round = 0; round < 20; round++) {
          const { client } = buildClient();
          await a.clients.createClient(client);
          await Promise.all([
            a.clients.updateClient(client.clientId, { disabled: true }),
            b.clients.updateClient(client.clientId, { clientSecretHash: `rotated-${round}` }),
          ]);
          const found = await a.clients.findClient(client.clientId);
          expect(found).toMatchObject({ disabled: true, clientSecretHash: `rotated-${round}`, name: client.name });
        }
      });
    });

    it(`saveTokens racing revokeClientTokens(clientId) on another instance leaves no token of the integration (${RACE_ROUNDS} rounds)`, async () => {
      await withTwoInstances(async (a, b) => {
        let accepted = 0;
        let refused = 0;
        for (let round = 0; round < RACE_ROUNDS; round++) {
          const clientId = `client-${round}`;
          const authorizedAt = now();
          let n = 0;
          const make = () => {
            n += 1;
            return n % 3 === 0
              ? { access: buildToken({ clientId, userId: null }), refresh: null }
              : buildTokenPair({ clientId, userId: `user-${n % 2}` });
          };
          const outcome = await saveWhile(a, () => b.tokens.revokeClientTokens(clientId), make, authorizedAt);
          await expectAllGone([a, b], outcome.tried);
          accepted += outcome.accepted;
          refused += outcome.refused;
        }
        // Both sides of the race were reached: saves the revocation deleted, and saves its tombstone refused.
        expect(accepted).toBeGreaterThan(0);
        expect(refused).toBeGreaterThan(0);
      });
    });

    it(`saveTokens racing revokeClientTokens(clientId, userId) on another instance leaves no token of the user (${RACE_ROUNDS} rounds)`, async () => {
      await withTwoInstances(async (a, b) => {
        for (let round = 0; round < RACE_ROUNDS; round++) {
          const clientId = `client-${round}`;
          const authorizedAt = now();
          const outcome = await saveWhile(
            a,
            () => b.tokens.revokeClientTokens(clientId, 'user-x'),
            () => buildTokenPair({ clientId, userId: 'user-x' }),
            authorizedAt,
          );
          await expectAllGone([a, b], outcome.tried);
        }
        // Another user's tokens at the integration are untouched.
        const other = buildTokenPair({ clientId: 'client-0', userId: 'user-y' });
        expect(await a.tokens.saveTokens(other.access, other.refresh, { authorizedAt: now() })).toBe(true);
        await b.tokens.revokeClientTokens('client-0', 'user-x');
        expect(await a.tokens.findRefreshToken(other.refresh.tokenHash)).toEqual(other.refresh);
      });
    });

    it(`saveTokens racing revokeGrant on another instance leaves no token of the grant (${RACE_ROUNDS} rounds)`, async () => {
      await withTwoInstances(async (a, b) => {
        for (let round = 0; round < RACE_ROUNDS; round++) {
          const grantId = `grant-${round}`;
          const outcome = await saveWhile(
            a,
            () => b.tokens.revokeGrant(grantId),
            () => buildTokenPair({ grantId, clientId: 'client', userId: 'user' }),
            now(),
          );
          await expectAllGone([a, b], outcome.tried);
        }
      });
    });

    it('a host pool defaulting to SERIALIZABLE still saves, revokes and refuses exactly (each transaction asks for READ COMMITTED)', async () => {
      const schema = freshSchema();
      const pool = new pg.Pool({ connectionString: url, options: '-c default_transaction_isolation=serializable' });
      try {
        const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
        const { access, refresh } = buildTokenPair();
        const authorizedAt = now();
        expect(await store.tokens.saveTokens(access, refresh, { authorizedAt })).toBe(true);
        await store.tokens.revokeClientTokens(access.clientId);
        await expectAllGone([store], [access, refresh]);
        const late = buildTokenPair({ clientId: access.clientId });
        expect(await store.tokens.saveTokens(late.access, late.refresh, { authorizedAt })).toBe(false);
        await store.close();
      } finally {
        await pool.end();
        await dropSchema(schema);
      }
    });
  });

  describe('operations', () => {
    it('the background sweep deletes expired rows and tombstones and keeps live ones', async () => {
      const store = await openStore(freshSchema(), { sweepIntervalSeconds: 0.05 });
      const schema = schemaOf.get(store)!;
      const count = async (table: string): Promise<number> =>
        (await admin!.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`)).rows[0].n;
      try {
        const live = buildToken();
        await store.tokens.saveTokens(buildToken({ expiresAt: new Date(Date.now() - 1000) }), null, { authorizedAt: now() });
        await store.tokens.saveTokens(live, null, { authorizedAt: now() });
        await store.codes.saveCode(buildCode({ expiresAt: new Date(Date.now() - 1000) }));
        await store.tokens.revokeClientTokens('kept');
        // Tombstones past their retention, as the sweep finds them a day after the revocation.
        await admin!.query(`INSERT INTO "${schema}".client_revocations VALUES ('old', now() - interval '2 days', now() - interval '1 day')`);
        await admin!.query(`INSERT INTO "${schema}".user_revocations VALUES ('old', 'u', now() - interval '2 days', now() - interval '1 day')`);
        await expect.poll(() => count('tokens'), { timeout: 5000 }).toBe(1);
        await expect.poll(() => count('codes')).toBe(0);
        await expect.poll(() => count('client_revocations')).toBe(1);
        await expect.poll(() => count('user_revocations')).toBe(0);
        expect(await store.tokens.findAccessToken(live.tokenHash)).toEqual(live);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('a host pool stays open after close(), and tablePrefix keeps two stores apart in one schema', async () => {
      const schema = freshSchema();
      const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 2000 });
      try {
        const a = await createPostgresStore({ pool, schema, tablePrefix: 'a_' });
        const b = await createPostgresStore({ pool, schema, tablePrefix: 'b_' });
        const { client } = buildClient();
        await a.clients.createClient(client);
        expect(await b.clients.findClient(client.clientId)).toBeNull();
        await a.close();
        await b.close();
        expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      } finally {
        await pool.end();
        await dropSchema(schema);
      }
    });

    it('keeps serving after the server kills its connections (no restart needed)', async () => {
      const victim = `eor_victim_${process.pid}`;
      const schema = freshSchema();
      const store = await createPostgresStore({
        connectionString: `${url}?application_name=${victim}`,
        schema,
        // The killed idle connections are reported to the logger: expected here, so kept out of the output.
        logger: { warn: () => undefined },
      });
      try {
        const { client } = buildClient();
        await store.clients.createClient(client);
        const killed = await admin!.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [victim],
        );
        expect(killed.rowCount).toBeGreaterThan(0);
        // The first call may meet a connection killed under it: it must fail as an outage, not a bug.
        const first = await store.clients.findClient(client.clientId).catch((err: unknown) => err);
        if (first instanceof Error) expect(first).toBeInstanceOf(StoreUnavailableError);
        expect(await store.clients.findClient(client.clientId)).toEqual(client);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('rejects with StoreUnavailableError when the database is unreachable (own pool and host pool)', async () => {
      const closed = 'postgres://postgres@127.0.0.1:1/test';
      await expect(createPostgresStore({ connectionString: closed, queryTimeoutMs: 1000 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      const pool = new pg.Pool({ connectionString: closed });
      try {
        await expect(createPostgresStore({ pool, queryTimeoutMs: 1000 })).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await pool.end();
      }
    });

    it('answers StoreUnavailableError while the server is down or hanging, and resumes when it is back', async () => {
      const proxy = await startProxy();
      const schema = freshSchema();
      const store = await createPostgresStore({ connectionString: viaProxy(proxy), schema, queryTimeoutMs: 500 });
      try {
        const { client } = buildClient();
        await store.clients.createClient(client);
        for (const mode of ['down', 'hang'] as const) {
          proxy.setMode(mode);
          await expect(store.clients.findClient(client.clientId), mode).rejects.toBeInstanceOf(StoreUnavailableError);
          await expect(store.tokens.saveTokens(buildToken(), null, { authorizedAt: now() }), mode).rejects.toBeInstanceOf(
            StoreUnavailableError,
          );
          await expect(store.tokens.revokeClientTokens(client.clientId), mode).rejects.toBeInstanceOf(StoreUnavailableError);
          proxy.setMode('up');
          // Nothing written before the outage is lost, and no restart is needed.
          await expect
            .poll(() => store.clients.findClient(client.clientId).catch(() => null), { timeout: 5000 })
            .toEqual(client);
        }
      } finally {
        await store.close();
        await proxy.close();
        await dropSchema(schema);
      }
    });

    it('refuses an unsafe schema or tablePrefix, naming the option', async () => {
      await expect(createPostgresStore({ connectionString: url, schema: 'x"; DROP' })).rejects.toThrow(/"schema"/);
      await expect(createPostgresStore({ connectionString: url, tablePrefix: 'a-b' })).rejects.toThrow(/"tablePrefix"/);
    });
  });
});
