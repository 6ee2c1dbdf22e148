// PostgreSQL Store: shared state for many API instances, schema migrated by the store on start.
import { listenForPoolErrors } from './pool-error-listeners.js';
import { createPostgresPool, type PostgresClient, type PostgresPool, type PostgresPoolConnection } from './driver.js';
import type { ClientCopies, CompleteStore, RevocationFeed } from '../contract.js';
import { integrationCopiesOption } from '../integration-copies-option.js';
import { createRevisionCopies } from '../revision-copies.js';
import { createPostgresCodeStore, createPostgresClientStore, createPostgresConsentStore } from './records.js';
import { rethrowPostgresError } from './errors.js';
import { createPostgresRunner, prepareSql } from './query.js';
import { createPostgresTables, migratePostgresSchema, type PostgresTables } from './schema.js';
import { startPostgresSweeper, type StoreLogger } from './sweeper.js';
import { guardStoreLogger } from '../console-store-logger.js';
import { createPostgresTokenStore, createRevocationLockKeys } from './tokens.js';
import { createPostgresKeyStore } from './keys.js';
import { createPostgresRateLimits } from './rate-limits.js';
import { postgresRevocationChannel, startPostgresRevocationFeed } from './revocation-feed.js';
import { checkTimerRange } from '../timer-range.js';

export { StoreUnavailableError } from '../store-unavailable-error.js';
export type { StoreLogger } from './sweeper.js';
export type { PostgresPool } from './driver.js';

/**
 * What createPostgresStore returns: a Store with every tier (administration, consents, signing keys, rate
 * limits, revocation feed).
 */
export type PostgresStore = CompleteStore & {
  readonly revocations: RevocationFeed;
  readonly clientCopies: ClientCopies;
  close(): Promise<void>;
  /** Runs a sweep of expired rows now, 1000 per DELETE like the timer's; resolves when it is done. */
  sweepExpired(): Promise<void>;
};

/**
 * The server's clock as epoch milliseconds (`Store.backendTime`): `clock_timestamp()`, the time the statement
 * reads it, not `now()`, which is the start of the transaction and may be older on a pooler that holds one open.
 */
const BACKEND_TIME = prepareSql('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms');

/** Options of createPostgresStore. Give `pool` or `connectionString`, not both. */
export interface PostgresStoreOptions {
  /**
   * A pool the host owns (and may share with its own queries). `close()` leaves it open. Give it a
   * `connectionTimeoutMillis`; without one the store still races every call against `2 × queryTimeoutMs`. Until
   * `close()` the store listens for the pool's `'error'` (an idle connection lost), which would otherwise end the process.
   */
  readonly pool?: PostgresPool;
  /**
   * `postgres://user@host:5432/db`: the store makes and owns its pool; `close()` ends it. `undefined` counts
   * as not given, so `connectionString: process.env.DATABASE_URL` type-checks under `exactOptionalPropertyTypes`.
   */
  readonly connectionString?: string | undefined;
  /** Pool size when the store makes the pool: a whole number ≥ 1. Default 10 (node-postgres' default). */
  readonly maxConnections?: number;
  /** Schema holding the tables; created if missing. Default `'oauth'`. */
  readonly schema?: string;
  /** Prefix for every table name (letters, digits, `_`). Default `''`. */
  readonly tablePrefix?: string;
  /**
   * Open only a store whose tables are there: no schema or table is created, and a schema and prefix without
   * them reject with an Error whose `code` is `'ENOENT'` and whose `path` names them (never the connection
   * string). For tools that only read or change what an app made (`oauth-admin`): a mistyped schema or prefix
   * must not leave an empty store behind and report no integrations. Tables of an older version are migrated
   * as usual. Default false.
   */
  readonly mustExist?: boolean;
  /** Seconds between background sweeps of expired rows (1000 per DELETE); `0` disables the timer (`sweepExpired()` still runs one). Default 60. */
  readonly sweepIntervalSeconds?: number;
  /**
   * Milliseconds before a query, or waiting for a connection, gives up with StoreUnavailableError
   * (the router answers 503). Becomes `statement_timeout`, `query_timeout` and `connectionTimeoutMillis`
   * of a pool the store makes. A call the store batches (lookups, code redemptions, token saves) is sent within
   * it of being made or not at all (nothing of it sent), then has it for its statement: each settles within twice
   * it, whatever stalls ahead of it. A whole number ≥ 1; default 5000.
   */
  readonly queryTimeoutMs?: number;
  /**
   * How many integrations this process keeps as it last read them, so that a token request reads none from the
   * store (each copy is checked by the save: the contract's `clientCopies`). Default 10,000, about 1–2 KB of heap
   * each. Past it the copy kept longest goes for each new one, so a registry larger than it reads that share of its
   * integrations again on each token request (half of them at twice the bound): set it to the number of
   * integrations that call. An integer from 1 to 10,000,000.
   */
  readonly maxIntegrationCopies?: number;
  /**
   * Receives background failures (sweeps, idle connections dropped) with the driver's error as the second
   * argument: log its message and code (`describeStoreError`), never the object, which holds the connection.
   * Default: one line per failure on stderr (`consoleStoreLogger`).
   */
  readonly logger?: StoreLogger;
}

/**
 * One batch of integration lookups and one of token saves at the database at a time, each carrying the calls
 * that arrived while the last was out (batcher.ts). One: the `token-postgres` bench read 0.37 / 0.34 / 0.25 of
 * the bare route with 1 / 2 / 4 batches in flight, as fewer, larger batches cost the two cores less.
 */
const BATCHING = { inFlight: 1, maxItems: 100 } as const;

function checkNonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new TypeError(`createPostgresStore: option "${name}" must be a non-negative number (got ${String(value)})`);
  }
  return value;
}

/**
 * A whole-number option from 1, `fallback` when absent. `queryTimeoutMs` becomes `statement_timeout`, where 0 means none
 * (it silently meant 5000) and PostgreSQL rounds a fraction to whole milliseconds (0.4 to 0: none); `maxConnections`
 * becomes pg-pool's `max`, which reads 0 or NaN as 10 and a negative one as a pool always full (`-1` failed every query
 * after `queryTimeoutMs` as an outage instead of naming the option).
 * @throws TypeError naming the option.
 */
function checkWholeFromOne(name: 'queryTimeoutMs' | 'maxConnections', unit: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new TypeError(`createPostgresStore: option "${name}" must be a whole number of ${unit} ≥ 1 (got ${String(value)})`);
  }
  return value;
}

/**
 * Rejects with an ENOENT Error when the schema and prefix hold no migrations table (`PostgresStoreOptions.mustExist`).
 * The `path` names the schema and prefix only: the connection string may carry a password.
 */
async function requireExistingTables(client: PostgresClient, tables: PostgresTables, schema: string, tablePrefix: string): Promise<void> {
  const { rows } = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [tables.migrations]);
  if (rows[0]?.present === true) return;
  const path = `PostgreSQL schema "${schema}"${tablePrefix === '' ? '' : ` with table prefix "${tablePrefix}"`}`;
  throw Object.assign(new Error(`no express-oauth-router tables in ${path}`), { code: 'ENOENT', path });
}

/**
 * Creates a PostgreSQL-backed Store and brings its schema up to date (versioned, idempotent, safe when
 * several instances start at once). Codes are consumed atomically in SQL; revocation is exact: token
 * issuance cannot outrun a revocation of its grant, integration or user, across any number of instances
 * (see createPostgresTokenStore); ids are compared byte by byte; expired rows and tombstones are swept in
 * the background. Needs READ COMMITTED (each of its transactions asks for it, whatever the default).
 * `revocations.mark()` (the `revocationFeed` tier) counts the NOTIFY every revocation sends at its commit,
 * received on one dedicated LISTEN connection outside the pool (see startPostgresRevocationFeed), and this
 * store's own revocations; it is `null` while that connection is down, so `requireBearer` looks tokens up.
 * `clientCopies` keeps each integration `findClient` read with its row's `xmin`, which `saveTokens` checks
 * (schema migration 8), so the token endpoint authenticates from a copy without ever trusting a stale one.
 *
 * @example
 * const store = await createPostgresStore({ connectionString: process.env.DATABASE_URL });
 * @throws TypeError for invalid options; StoreUnavailableError when the database cannot be reached; Error
 *   "The PostgreSQL store needs pg: npm install pg@8" when the driver is not installed.
 * @see src/stores/contract.ts (the Store contract), RFC 6749 §4.1.2 (single-use codes).
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  if (!options.pool === !options.connectionString) {
    throw new TypeError('createPostgresStore: give exactly one of the options "pool" and "connectionString"');
  }
  const queryTimeoutMs = checkWholeFromOne('queryTimeoutMs', 'milliseconds', options.queryTimeoutMs, 5000);
  const maxCopies = integrationCopiesOption('createPostgresStore', options.maxIntegrationCopies);
  const maxConnections = checkWholeFromOne('maxConnections', 'connections', options.maxConnections, 10);
  const sweepIntervalSeconds = checkNonNegative('sweepIntervalSeconds', options.sweepIntervalSeconds, 60);
  // A query's deadline is twice its timeout (the runner's withDeadline): that is what must fit a timer.
  checkTimerRange('createPostgresStore: option "queryTimeoutMs"', queryTimeoutMs, 'milliseconds', 2);
  checkTimerRange('createPostgresStore: option "sweepIntervalSeconds"', sweepIntervalSeconds, 'seconds');
  const schema = options.schema ?? 'oauth';
  const tablePrefix = options.tablePrefix ?? '';
  const tables = createPostgresTables(schema, tablePrefix);
  // A host's logger that throws must not end the host from a socket listener or a timer.
  const logger: StoreLogger = guardStoreLogger(options.logger);

  const ownsPool = !options.pool;
  // A host's pool is a pg Pool like the one createPostgresPool makes; only its declared type is looser.
  const pool =
    (options.pool as PostgresPoolConnection | undefined) ??
    (await createPostgresPool({
      connectionString: options.connectionString,
      max: maxConnections,
      connectionTimeoutMillis: queryTimeoutMs,
      query_timeout: queryTimeoutMs,
      statement_timeout: queryTimeoutMs,
      // Keeps a dead peer from holding a pooled connection forever when the network drops silently.
      keepAlive: true,
    }));
  // node-postgres emits each idle connection's loss (a server restart, pg_terminate_backend) on the pool, and with no
  // listener Node ends the host process. A host's pool too: its idle connections are the store's as much as the
  // host's, and a host that listens itself only gets this warning as well. close() takes the listener off a host's pool.
  const idleLost = (err: Error) => logger.warn('express-oauth-router: idle PostgreSQL connection lost', err);
  // One listener on the pool for every store on it (a schema per tenant on one host pool, say).
  const stopListening = listenForPoolErrors(pool, idleLost);

  const db = createPostgresRunner(pool, queryTimeoutMs);
  const channel = postgresRevocationChannel(schema, tablePrefix);
  // The listener needs no table: it connects while the schema migrates.
  const opening = new AbortController();
  // Integration copies are revised by their row's xmin, and a standby promoted after its primary died reuses the
  // transaction ids the primary assigned to what it lost: a copy of a lost change may carry the xmin of another
  // version written since, and pass the save's check. A failover always breaks or silences the feed's listener,
  // so no copy read before such a gap is used after it.
  const copies = createRevisionCopies(maxCopies);
  const starting = startPostgresRevocationFeed({
    pool, channel, timeoutMs: queryTimeoutMs, logger, signal: opening.signal, onGap: copies.clear,
  });
  let readCommitted = true;
  try {
    const client = await db.connect();
    let failure: Error | undefined;
    try {
      if (options.mustExist === true) await requireExistingTables(client, tables, schema, tablePrefix);
      await migratePostgresSchema(client, tables, `express-oauth-router:${schema}`, tablePrefix);
      // Outside a transaction block this is the level each single statement of the pool runs at.
      const { rows } = await client.query<{ level: string }>(`SELECT current_setting('transaction_isolation') AS level`);
      readCommitted = rows[0]?.level === 'read committed';
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      client.release(failure);
    }
  } catch (err) {
    // Report the failure now, not once the listener's wait for its first ping runs out.
    opening.abort();
    await (await starting).close();
    if (ownsPool) await pool.end().catch(() => undefined);
    else stopListening();
    return rethrowPostgresError(err);
  }
  const feed = await starting;
  feed.opened();

  // With 0 the sweeper has no timer, and runs only when sweepExpired() asks.
  const sweeper = startPostgresSweeper(db, tables, sweepIntervalSeconds, logger);
  // A batched call is sent within queryTimeoutMs of being made or not at all, then has queryTimeoutMs of its own.
  const batching = { ...BATCHING, sendWithinMs: queryTimeoutMs };

  let closing: Promise<void> | undefined;
  return {
    clients: createPostgresClientStore(db, tables, { channel, bump: feed.bump }, batching, copies),
    codes: createPostgresCodeStore(db, tables, batching),
    // Lock keys are scoped to the tables, so instances of one store share them and other stores do not.
    tokens: createPostgresTokenStore(db, tables, createRevocationLockKeys(tables.tokens), readCommitted, {
      channel,
      bump: feed.bump,
    }, batching),
    consents: createPostgresConsentStore(db, tables),
    keys: createPostgresKeyStore(db, tables, tables.signingKeys),
    rateLimits: createPostgresRateLimits(db, tables),
    revocations: feed.feed,
    clientCopies: { find: copies.get },
    async backendTime() {
      const { rows } = await db.query<{ ms: number }>(BACKEND_TIME, []);
      return new Date(Math.floor(rows[0]!.ms));
    },
    sweepExpired: () => sweeper.sweepNow(),
    close() {
      // One closing for every call: a second call (two shutdown hooks) resolves when the pool has ended, not at once.
      closing ??= (async () => {
        await feed.close();
        await sweeper.stop();
        if (ownsPool) await pool.end();
        else stopListening();
      })();
      return closing;
    },
  };
}
