// A database that is up but refuses writes for now (a full Redis, a read-only PostgreSQL) is an outage, not a bug:
// the store rejects with StoreUnavailableError and the token endpoint answers 503, never a 500 logged per request.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createClient } from 'redis';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { Store } from '../../src/stores/contract.js';
import { buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { basic, createTestApp } from '../helpers/app.js';
import { startRedisServer } from '../helpers/redis-server.js';

const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** A client_credentials request to the router on `store`, with an integration registered while writes worked. */
async function tokenRequestOn(store: Store): Promise<() => Promise<request.Response>> {
  const t = await createTestApp({ logger: { warn() {}, error() {} } }, store);
  return () => request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(t.credentialsClient))
    .send({ grant_type: 'client_credentials' });
}

/** The reason the store gave, with its driver error's code or reply. */
async function refusal(store: Store): Promise<unknown> {
  const { access } = buildTokenPair({ userId: null });
  return store.tokens.saveTokens(access, null, { authorizedAt: new Date() }).then(() => null, (error: unknown) => error);
}


describe.skipIf(!REDIS_URL)('Redis at maxmemory under noeviction (OOM): 503, not 500', () => {
  it('a save is refused with StoreUnavailableError and a token request answered 503 temporarily_unavailable', async () => {
    // A server of its own: the shared one must not be filled up under the other tests.
    const server = await startRedisServer(['--maxmemory-policy', 'noeviction']);
    cleanups.push(() => server.stop());
    const { url } = server;
    const admin = createClient({ url });
    await admin.connect();
    cleanups.push(() => admin.quit());
    const store = await createRedisStore({ url });
    cleanups.push(() => store.close());
    const tokenRequest = await tokenRequestOn(store);
    expect((await tokenRequest()).status).toBe(200);

    // Full: more used than the limit now allows, so Redis refuses every write with OOM.
    await admin.set('filler', randomBytes(3 * 1024 * 1024).toString('base64'));
    await admin.configSet('maxmemory', '2mb');
    const error = await refusal(store);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/OOM/);
    const res = await tokenRequest();
    expect(res.status, res.text).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');

    // Room again: served at once.
    await admin.del('filler');
    await admin.configSet('maxmemory', '0');
    expect((await tokenRequest()).status).toBe(200);
  });
});

describe.skipIf(!PG_URL)('PostgreSQL taking no writes (25006: a standby, a demoted primary): 503, not 500', () => {
  it('a save is refused with StoreUnavailableError and a token request answered 503 temporarily_unavailable', { timeout: 30_000 }, async () => {
    const suffix = randomBytes(4).toString('hex');
    const role = `oauth_read_only_${suffix}`;
    const schema = `oauth_read_only_${suffix}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    cleanups.push(() => admin.end());
    await admin.query(`CREATE ROLE ${role} LOGIN SUPERUSER`);
    cleanups.push(() => admin.query(`DROP ROLE IF EXISTS ${role}`));
    cleanups.push(() => admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    const url = new URL(PG_URL);
    url.username = role;
    const store = await createPostgresStore({ connectionString: url.href, schema });
    cleanups.push(() => store.close());
    const tokenRequest = await tokenRequestOn(store);
    expect((await tokenRequest()).status).toBe(200);

    // As after a failover that left the pool on a server taking no writes: every new session is read-only.
    await admin.query(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);
    let error: unknown = null;
    // The first calls may meet a connection the server just ended (also a 503); then every save meets 25006.
    for (let tries = 0; tries < 10; tries += 1) {
      error = await refusal(store);
      if ((error as { cause?: { code?: unknown } } | null)?.cause?.code === '25006') break;
    }
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as { cause?: { code?: unknown } }).cause?.code).toBe('25006');
    const res = await tokenRequest();
    expect(res.status, res.text).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');
  });
});

describe.skipIf(!PG_URL)('PostgreSQL database taking no connections (55000: ALLOW_CONNECTIONS false, a maintenance window): 503, not 500', () => {
  it('a call on a new connection is refused with StoreUnavailableError and a token request answered 503 temporarily_unavailable', { timeout: 30_000 }, async () => {
    const database = `oauth_no_connections_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    cleanups.push(() => admin.end());
    await admin.query(`CREATE DATABASE ${database}`);
    cleanups.push(() => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    const url = new URL(PG_URL);
    url.pathname = `/${database}`;
    const store = await createPostgresStore({ connectionString: url.href, logger: { warn() {} } });
    cleanups.push(() => store.close());
    const tokenRequest = await tokenRequestOn(store);
    expect((await tokenRequest()).status).toBe(200);

    await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    cleanups.push(() => admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`));
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
    let error: unknown = null;
    // The first calls may meet a connection the server just ended (also a 503); then every new one meets 55000.
    for (let tries = 0; tries < 10; tries += 1) {
      error = await refusal(store);
      if ((error as { cause?: { code?: unknown } } | null)?.cause?.code === '55000') break;
    }
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as { cause?: { code?: unknown } }).cause?.code).toBe('55000');
    const res = await tokenRequest();
    expect(res.status, res.text).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');
  });
});
