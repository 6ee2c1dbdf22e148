// PostgreSQL store: the conformance suite plus what only a shared database shows (migrations, races, outages).
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildToken } from '../../src/testing/conformance-fixtures.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { startFaultProxy } from './fault-proxy.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL store tests skipped: set OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test to run them');

let counter = 0;
/** A schema name no other test (or parallel test file) uses, so every store starts empty. */
function freshSchema(): string {
  counter += 1;
  return `oauth_t${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

const admin = url ? new pg.Pool({ connectionString: url, max: 4 }) : null;
const schemaOf = new WeakMap<Store, string>();

async function dropSchema(schema: string): Promise<void> {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

async function openStore(schema = freshSchema(), extra: Partial<Parameters<typeof createPostgresStore>[0]> = {}) {
  const store = await createPostgresStore({ connectionString: url, schema, ...extra });
  schemaOf.set(store, schema);
  return store;
}

describe.skipIf(!url)('PostgreSQL store', () => {
  afterAll(async () => {
    await admin?.end();
  });

  runStoreConformance({
    name: 'postgres',
    createStore: () => openStore(),
    async destroyStore(store) {
      await store.close?.();
      await dropSchema(schemaOf.get(store) ?? '');
    },
  });

  describe('across instances', () => {
    it('two stores migrating the same new schema at once both succeed, and each version is applied once', async () => {
      const schema = freshSchema();
      try {
        const stores = await Promise.all([openStore(schema), openStore(schema), openStore(schema)]);
        const { rows } = await admin!.query(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
        expect(rows.map((r: { version: number }) => r.version)).toEqual([1, 2]);
        await Promise.all(stores.map((s) => s.close?.()));
        // Idempotent: a restart against the migrated schema changes nothing.
        const again = await openStore(schema);
        await again.close?.();
      } finally {
        await dropSchema(schema);
      }
    });

    it('50 concurrent consumeCode calls spread over two instances (two pools) give exactly one winner', async () => {
      const schema = freshSchema();
      const [a, b] = [await openStore(schema), await openStore(schema)];
      try {
        const code = buildCode();
        await a.codes.saveCode(code);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).codes.consumeCode(code.codeHash)),
        );
        expect(results.filter((r) => r.kind === 'consumed')).toHaveLength(1);
        expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(49);
      } finally {
        await Promise.all([a.close?.(), b.close?.()]);
        await dropSchema(schema);
      }
    });

    it('what one instance writes, another reads; a revocation on one is seen by the other', async () => {
      const schema = freshSchema();
      const [a, b] = [await openStore(schema), await openStore(schema)];
      try {
        const { client } = buildClient();
        await a.clients.saveClient(client);
        expect(await b.clients.findClient(client.clientId)).toEqual(client);
        const access = buildToken();
        expect(await a.tokens.saveTokens(access, null)).toBe(true);
        expect(await b.tokens.findAccessToken(access.tokenHash)).toEqual(access);
        await b.tokens.revokeGrant(access.grantId);
        expect(await a.tokens.findAccessToken(access.tokenHash)).toBeNull();
        expect(await a.tokens.saveTokens(buildToken({ grantId: access.grantId }), null)).toBe(false);
      } finally {
        await Promise.all([a.close?.(), b.close?.()]);
        await dropSchema(schema);
      }
    });

    it('saveTokens racing revokeGrant never leaves a token of the revoked grant behind', async () => {
      const store = await openStore();
      try {
        for (let round = 0; round < 20; round++) {
          const grantId = `grant-${round}`;
          const tokens = Array.from({ length: 5 }, () => buildToken({ grantId }));
          await Promise.all([
            ...tokens.map((t) => store.tokens.saveTokens(t, null)),
            store.tokens.revokeGrant(grantId),
          ]);
          const survivors = await Promise.all(tokens.map((t) => store.tokens.findAccessToken(t.tokenHash)));
          expect(survivors.filter((t) => t !== null)).toEqual([]);
        }
      } finally {
        await store.close?.();
        await dropSchema(schemaOf.get(store)!);
      }
    });
  });

  describe('operations', () => {
    it('the background sweep deletes expired rows and keeps live ones', async () => {
      const store = await openStore(freshSchema(), { sweepIntervalSeconds: 0.05 });
      const schema = schemaOf.get(store)!;
      try {
        const live = buildToken();
        await store.tokens.saveTokens(buildToken({ expiresAt: new Date(Date.now() - 1000) }), null);
        await store.tokens.saveTokens(live, null);
        await store.codes.saveCode(buildCode({ expiresAt: new Date(Date.now() - 1000) }));
        await expect
          .poll(async () => (await admin!.query(`SELECT count(*)::int AS n FROM "${schema}".tokens`)).rows[0].n, {
            timeout: 5000,
          })
          .toBe(1);
        await expect
          .poll(async () => (await admin!.query(`SELECT count(*)::int AS n FROM "${schema}".codes`)).rows[0].n)
          .toBe(0);
        expect(await store.tokens.findAccessToken(live.tokenHash)).toEqual(live);
      } finally {
        await store.close?.();
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
        await a.clients.saveClient(client);
        expect(await b.clients.findClient(client.clientId)).toBeNull();
        await a.close?.();
        await b.close?.();
        expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      } finally {
        await pool.end();
        await dropSchema(schema);
      }
    });

    it('keeps serving after the server kills its connections (no restart needed)', async () => {
      const victim = `eor_victim_${process.pid}`;
      const schema = freshSchema();
      const store = await createPostgresStore({ connectionString: `${url}?application_name=${victim}`, schema });
      try {
        const { client } = buildClient();
        await store.clients.saveClient(client);
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
        await store.close?.();
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
      const target = new URL(url);
      const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const viaProxy = new URL(url);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      const schema = freshSchema();
      const store = await createPostgresStore({ connectionString: viaProxy.href, schema, queryTimeoutMs: 500 });
      try {
        const { client } = buildClient();
        await store.clients.saveClient(client);
        for (const mode of ['down', 'hang'] as const) {
          proxy.setMode(mode);
          await expect(store.clients.findClient(client.clientId), mode).rejects.toBeInstanceOf(StoreUnavailableError);
          await expect(store.tokens.saveTokens(buildToken(), null), mode).rejects.toBeInstanceOf(StoreUnavailableError);
          proxy.setMode('up');
          // Nothing written before the outage is lost, and no restart is needed.
          await expect
            .poll(() => store.clients.findClient(client.clientId).catch(() => null), { timeout: 5000 })
            .toEqual(client);
        }
      } finally {
        await store.close?.();
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
