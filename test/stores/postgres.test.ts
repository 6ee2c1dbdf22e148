// PostgreSQL store: the conformance suite plus what only a real database shows (migrations, operations, outages).
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createPostgresStore, type PostgresPool, type PostgresStore, type PostgresStoreOptions } from '../../src/stores/postgres/index.js';
import { POSTGRES_SCHEMA_VERSION, createPostgresTables, migratePostgresSchema } from '../../src/stores/postgres/schema.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildToken } from '../../src/testing/conformance-fixtures.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { untilServing } from '../helpers/store-races.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { createPostgresRunner, prepareSql } from '../../src/stores/postgres/query.js';

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
    // Another instance on the same schema, connected directly: its revocations reach the store by NOTIFY only.
    openPeer: (store) => createPostgresStore({ connectionString: url, schema: schemaOf.get(store)!, sweepIntervalSeconds: 0 }),
    // The peer connects directly, past the proxy the outage hook cuts: it can revoke during the outage.
    outageSparesPeer: true,
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
        expect(rows.map((r: { version: number }) => r.version)).toEqual(Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1));
        await Promise.all(stores.map((s) => s.close()));
        // Idempotent: a restart against the migrated schema changes nothing.
        const again = await openStore(schema);
        await again.close();
      } finally {
        await dropSchema(schema);
      }
    });

    it('a save with newGrant (migration 9) writes its token and no grant row; a save without it writes the row', async () => {
      const store = await openStore();
      const schema = schemaOf.get(store)!;
      const grantRows = async (grantId: string) =>
        Number((await admin!.query(`SELECT count(*)::int AS n FROM "${schema}".grants WHERE grant_id = $1`, [grantId])).rows[0].n);
      try {
        const fresh = buildToken({ userId: null });
        expect(await store.tokens.saveTokens(fresh, null, { authorizedAt: now(), newGrant: true })).toBe(true);
        expect(await store.tokens.findAccessToken(fresh.tokenHash)).toEqual(fresh);
        expect(await grantRows(fresh.grantId)).toBe(0);
        const plain = buildToken({ userId: null });
        expect(await store.tokens.saveTokens(plain, null, { authorizedAt: now() })).toBe(true);
        expect(await grantRows(plain.grantId)).toBe(1);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('a disable or enable that changes nothing writes no row version (xmin kept: other instances keep their copy); a disable still drops a previous secret', async () => {
      const store = await openStore();
      const schema = schemaOf.get(store)!;
      const revision = async (clientId: string) =>
        (await admin!.query<{ x: string }>(`SELECT xmin::text AS x FROM "${schema}".clients WHERE client_id = $1`, [clientId])).rows[0]!.x;
      try {
        const { client } = buildClient();
        await store.clients.createClient(client);
        const enabled = await revision(client.clientId);
        expect(await store.clients.enableClient!(client.clientId)).toBe('already_enabled');
        expect(await revision(client.clientId), 'an enable of an enabled integration').toBe(enabled);
        expect(await store.clients.disableClient!(client.clientId)).toBe('disabled');
        const disabled = await revision(client.clientId);
        expect(disabled).not.toBe(enabled);
        expect(await store.clients.disableClient!(client.clientId)).toBe('already_disabled');
        expect(await revision(client.clientId), 'a disable of a disabled integration').toBe(disabled);
        // A rotation with a grace period made while disabled leaves a previous secret: a disable removes it still.
        await store.clients.updateClient(client.clientId, { previousClientSecretHash: 'b'.repeat(64), previousClientSecretExpiresAt: new Date(Date.now() + 60_000) });
        expect(await store.clients.disableClient!(client.clientId)).toBe('already_disabled');
        const after = await store.clients.findClient(client.clientId);
        expect(after?.disabled).toBe(true);
        expect(after?.previousClientSecretHash ?? null).toBeNull();
        expect(after?.previousClientSecretExpiresAt ?? null).toBeNull();
        expect(await store.clients.enableClient!(client.clientId)).toBe('enabled');
        expect(await store.clients.findClient(client.clientId)).toMatchObject({ disabled: false });
        expect(await store.clients.disableClient!('missing')).toBeNull();
        expect(await store.clients.enableClient!('missing')).toBeNull();
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('an item of a version 8 instance (no new_grant) is saved against schema 9 as before, grant row included', async () => {
      const store = await openStore();
      const schema = schemaOf.get(store)!;
      try {
        const token = buildToken({ userId: null });
        const expires = token.expiresAt.toISOString();
        // The item exactly as a version 8 instance sends it: every field but new_grant.
        const item = {
          i: 1, grant_id: token.grantId, grant_expires_at: expires, client_id: token.clientId, user_id: null,
          authorized_at: now().toISOString(), client_revision: null, client_key: '42', user_key: null,
          access: token.tokenHash, access_scope: token.scope, access_issuer: token.issuer, access_expires_at: expires,
          refresh: null, refresh_scope: null, refresh_issuer: null, refresh_expires_at: null,
        };
        const { rows } = await admin!.query(
          `SELECT "${schema}".save_tokens_batch($1::jsonb, $2::timestamptz, false) AS r`, [JSON.stringify([item]), now()]);
        expect(rows[0].r).toEqual(['saved']);
        expect(await store.tokens.findAccessToken(token.tokenHash)).toEqual(token);
        const grants = await admin!.query(`SELECT 1 FROM "${schema}".grants WHERE grant_id = $1`, [token.grantId]);
        expect(grants.rowCount).toBe(1);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    it('upgrading from version 3 keeps every integration, reading with no tokenEndpointAuthMethod until one is given', async () => {
      const schema = freshSchema();
      const { client } = buildClient();
      const conn = await admin!.connect();
      try {
        await migratePostgresSchema(conn, createPostgresTables(schema, ''), `test:${schema}`, '', 3);
        // Inserted the version 3 way: the method column does not exist yet.
        await conn.query(
          `INSERT INTO "${schema}".clients (client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes,
             require_pkce, credentials_issued_at, created_at, disabled) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [client.clientId, client.clientSecretHash, client.name, client.flow, [...client.redirectUris], [...client.allowedScopes],
            client.requirePkce, client.credentialsIssuedAt, client.createdAt, client.disabled],
        );
      } finally {
        conn.release();
      }
      const store = await openStore(schema);
      try {
        const found = await store.clients.findClient(client.clientId);
        expect(found).toEqual(client);
        expect(found).not.toHaveProperty('tokenEndpointAuthMethod');
        const restricted = { ...client, tokenEndpointAuthMethod: 'client_secret_basic' as const };
        expect(await store.clients.updateClient!(client.clientId, { tokenEndpointAuthMethod: 'client_secret_basic' })).toEqual(restricted);
        expect(await store.clients.findClient(client.clientId)).toEqual(restricted);
      } finally {
        await store.close();
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

  describe('operations', () => {
    it('a connection that breaks between two statements of a transaction rejects with StoreUnavailableError, and the process lives on', async () => {
      // pg's pool listens for errors only on idle clients: without a listener of the store's, the 'error' a
      // terminated backend emits on a checked-out client ends the host process (an outside fault script saw it
      // during revocations).
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      const runner = createPostgresRunner(pool, 2000);
      try {
        const outcome = runner.transaction(async (tx) => {
          const { rows } = await tx.query<{ pid: number }>(prepareSql('SELECT pg_backend_pid() AS pid'), []);
          await admin!.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          // The client notices the closed socket on its own, between statements: that is the 'error' event.
          await new Promise((resolve) => setTimeout(resolve, 300));
          return tx.query(prepareSql('SELECT 1'), []);
        });
        await expect(outcome).rejects.toBeInstanceOf(StoreUnavailableError);
        expect((await runner.query<{ one: number }>(prepareSql('SELECT 1 AS one'), [])).rows[0]!.one, 'the pool serves again').toBe(1);
      } finally {
        await pool.end();
      }
    });

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

    it('a consume relaxes only its own commit: the connection it ran on is synchronous again for the save', async () => {
      const schema = freshSchema();
      // One connection, so the statements after the consume run where it ran.
      const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 2000, max: 1 });
      const setting = async () => (await pool.query<{ s: string }>('SELECT current_setting($1) AS s', ['synchronous_commit'])).rows[0]!.s;
      try {
        const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
        const before = await setting();
        const code = buildCode();
        await store.codes.saveCode(code);
        const [first, second] = await Promise.all([store.codes.consumeCode(code.codeHash), store.codes.consumeCode(code.codeHash)]);
        expect([first.kind, second.kind].sort()).toEqual(['consumed', 'replayed']);
        expect(await setting()).toBe(before);
        await store.close();
      } finally {
        await pool.end();
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
        // A call may meet a killed connection the pool still held idle (the store's own queries and the revocation
        // feed's pings each left one): each such call fails as an outage, not a bug, and then the store serves again.
        let found: unknown = null;
        for (let attempt = 0; attempt < 10; attempt += 1) {
          found = await store.clients.findClient(client.clientId).catch((err: unknown) => err);
          if (!(found instanceof Error)) break;
          expect(found).toBeInstanceOf(StoreUnavailableError);
        }
        expect(found).toEqual(client);
      } finally {
        await store.close();
        await dropSchema(schema);
      }
    });

    // A restart closes every pooled connection, and the server accepts connections again only once their backends are
    // gone: the same as here once pg_terminate_backend's backends have left pg_stat_activity. A host's pool without an
    // 'error' listener of its own (node-postgres emits one per idle connection lost) must not end the process.
    for (const kind of ['own pool', 'host pool'] as const) {
      it(`no call fails once connections killed while idle are gone, and the host survives (${kind})`, async () => {
        const victim = `eor_idle_${process.pid}_${kind === 'own pool' ? 'own' : 'host'}`;
        const address = `${url}${url.includes('?') ? '&' : '?'}application_name=${victim}`;
        const schema = freshSchema();
        const warnings: { message: string; code: string | undefined }[] = [];
        const logger = {
          warn: (message: string, err?: unknown) => void warnings.push({ message, code: (err as { code?: string } | undefined)?.code }),
        };
        const pool = kind === 'host pool' ? new pg.Pool({ connectionString: address, max: 6, connectionTimeoutMillis: 2000 }) : null;
        const store = await createPostgresStore({
          ...(pool ? { pool } : { connectionString: address, maxConnections: 6 }),
          schema,
          sweepIntervalSeconds: 0,
          logger,
        });
        try {
          // Unbatched statements at once: the pool opens all its connections, then holds them idle.
          await Promise.all(Array.from({ length: 24 }, (_, i) => store.rateLimits.hit(`k${i % 3}`, 60_000, now())));
          const killed = await admin!.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
            victim,
          ]);
          expect(killed.rowCount).toBeGreaterThanOrEqual(2);
          await expect
            .poll(async () => (await admin!.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [victim])).rowCount, {
              timeout: 5000,
            })
            .toBe(0);
          // Each backend sent its FATAL before it left pg_stat_activity, but the reply that says so may be read in the
          // same event-loop turn as those FATALs: one more turn and every one has been read (a restart's clients
          // have had many turns by the time the server accepts again).
          await new Promise((resolve) => setImmediate(resolve));
          const outcomes = [];
          for (let i = 0; i < 12; i += 1) {
            outcomes.push(await store.rateLimits.get('k0', now()).then(() => 'ok', (err: unknown) => err));
          }
          expect(outcomes).toEqual(Array(12).fill('ok'));
          // The connections lost while idle were reported to the store's logger, with the server's reason.
          expect(warnings).toContainEqual({ message: 'express-oauth-router: idle PostgreSQL connection lost', code: '57P01' });
          // A host's pool outlives the store: closing it takes the store's listener off.
          await store.close();
          if (pool) expect(pool.listenerCount('error')).toBe(0);
        } finally {
          await store.close();
          await pool?.end();
          await dropSchema(schema);
        }
      });
    }

    // A multi-tenant host opens a store per schema on its one pool: one 'error' listener each took the pool past Node's
    // default of 10 listeners (MaxListenersExceededWarning at the 11th store), though nothing leaked.
    it('stores sharing one host pool add one error listener to it, and each store\'s logger still hears an idle connection lost', async () => {
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      const schemas = Array.from({ length: 12 }, () => freshSchema());
      const heard: number[] = [];
      const stores: PostgresStore[] = [];
      try {
        for (const [i, schema] of schemas.entries()) {
          stores.push(await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0, logger: { warn: () => void heard.push(i) } }));
        }
        expect(pool.listenerCount('error')).toBe(1);
        pool.emit('error', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
        expect(heard.sort((a, b) => a - b)).toEqual(schemas.map((_, i) => i));
        await stores[0]!.close();
        expect(pool.listenerCount('error')).toBe(1);
        for (const store of stores) await store.close();
        expect(pool.listenerCount('error')).toBe(0);
      } finally {
        for (const store of stores) await store.close();
        await pool.end();
        for (const schema of schemas) await dropSchema(schema);
      }
    });

    // The published PostgresPool type names options, connect, query and end only: a host's wrapper around pg's Pool
    // (instrumentation, a test double) that has just those is accepted by the type and must be accepted at run time.
    it('accepts a host pool with only the members PostgresPool declares (no EventEmitter methods)', async () => {
      const inner = new pg.Pool({ connectionString: url, max: 2 });
      const pool: PostgresPool = {
        options: inner.options,
        connect: () => inner.connect(),
        query: (config: pg.QueryConfig) => inner.query(config),
        end: () => inner.end(),
      };
      const schema = freshSchema();
      try {
        const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
        await store.close();
      } finally {
        await inner.end();
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
