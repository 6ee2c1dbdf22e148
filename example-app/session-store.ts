// Login/consent sessions shared by every instance: Redis or PostgreSQL next to the OAuth store, else in memory.
import session, { type SessionData, Store as SessionStore } from 'express-session';
import connectPgSimple from 'connect-pg-simple';
import { RedisStore } from 'connect-redis';
import pg from 'pg';
import { consoleStoreLogger, type StoreWarningLogger } from 'express-oauth-router';
import { connectResilientRedis, connectResilientRedisCluster, parseRedisClusterUrl } from 'express-oauth-router/stores/redis';

/** The session store the example app runs with, and how to release it. */
export interface AppSessionStore {
  /** `undefined`: the router's default MemorySessionStore (one process only; bounded and swept). */
  readonly store: SessionStore | undefined;
  /** For the banner, e.g. `redis (prefix oauth:sess:)`; never contains the URL (it may hold a password). */
  readonly description: string;
  /** True when every instance pointed at the same OAUTH_STORE sees the same sessions. */
  readonly shared: boolean;
  /** Closes the store's own connections. Idempotent. */
  close(): Promise<void>;
}

/** Options of createSessionStore. */
export interface SessionStoreOptions {
  /** Milliseconds before a session read or write gives up (the router then answers 503). Default 5000. */
  readonly timeoutMs?: number;
  /** Connection losses, with the driver's error as the second argument. Default: the OAuth stores' one-line default. */
  readonly logger?: StoreWarningLogger;
}

/**
 * Table of the PostgreSQL sessions, in the OAuth store's schema (`?schema=`, default `oauth`), after its table
 * prefix (`?table_prefix=`, default none), so two deployments that share a schema keep their sessions apart too.
 */
export const SESSION_TABLE = 'sessions';
/** Appended to the OAuth store's Redis prefix (`?prefix=`, default `oauth:`): keys `oauth:sess:<sid>`. */
export const SESSION_KEY_SUFFIX = 'sess:';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** The OAuth store's own rule for `tablePrefix` (createPostgresTables). */
const TABLE_PREFIX = /^[A-Za-z0-9_]{0,20}$/;

/** An Error the router recognises by name (`StoreUnavailableError`) and answers 503 for, never 500. */
function unavailable(message: string, cause?: unknown): Error {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  error.name = 'StoreUnavailableError';
  return error;
}

/** The URL without a parameter the OAuth store reads (`schema`, `table_prefix`, `prefix`), and that parameter's value. */
function splitUrl(url: string, name: string): { url: string; value: string | undefined } {
  const parsed = new URL(url);
  const value = parsed.searchParams.get(name) ?? undefined;
  parsed.searchParams.delete(name);
  return { url: value === undefined ? url : parsed.toString(), value };
}

type Callback = (err?: unknown, value?: unknown) => void;

/**
 * Wraps a session store so that a slow or unreachable backend fails within `timeoutMs` with an error named
 * StoreUnavailableError: the router's pages then answer 503 "temporarily unavailable", never a 500 or a
 * request that hangs on a dead connection. `onTimeout` lets the owner drop a connection that stopped answering;
 * `beforeCall` lets it make a lost connection again for this call (a promise the call waits for, within the
 * same deadline), or say there is nothing to wait for (`null`). Both are given the session id, whose key a cluster
 * routes by.
 */
class GuardedSessionStore extends SessionStore {
  constructor(
    private readonly inner: SessionStore,
    private readonly timeoutMs: number,
    private readonly onTimeout: (sid: string) => void,
    private readonly beforeCall: (sid: string) => Promise<void> | null = () => null,
  ) {
    super();
  }

  private guard(label: string, sid: string, callback: Callback | undefined, run: (done: Callback) => void): void {
    let settled = false;
    const finish: Callback = (err, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) callback?.(unavailable(`session store unavailable (${label} failed)`, err));
      else callback?.(null, value);
    };
    const timer = setTimeout(() => {
      finish(unavailable(`session store unavailable (no answer to ${label} within ${this.timeoutMs} ms)`));
      this.onTimeout(sid);
    }, this.timeoutMs);
    const send = (): void => {
      // The deadline may have passed while reconnecting: the caller has its 503, so nothing goes out.
      if (settled) return;
      try {
        run(finish);
      } catch (err) {
        finish(err);
      }
    };
    let reconnecting: Promise<void> | null;
    try {
      reconnecting = this.beforeCall(sid);
    } catch (err) {
      finish(err);
      return;
    }
    if (reconnecting) reconnecting.then(send, finish);
    else send();
  }

  override get(sid: string, callback: (err: unknown, session?: SessionData | null) => void): void {
    this.guard('get', sid, callback as Callback, (done) => this.inner.get(sid, done));
  }

  override set(sid: string, data: SessionData, callback?: (err?: unknown) => void): void {
    this.guard('set', sid, callback, (done) => this.inner.set(sid, data, done));
  }

  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    this.guard('destroy', sid, callback, (done) => this.inner.destroy(sid, done));
  }

  override touch(sid: string, data: SessionData, callback?: () => void): void {
    if (!this.inner.touch) {
      callback?.();
      return;
    }
    this.guard('touch', sid, callback, (done) => this.inner.touch!(sid, data, done));
  }
}

/**
 * Creates the table connect-pg-simple uses, once, under an advisory lock: two instances starting together
 * would otherwise both see it missing and one would fail on CREATE. (connect-pg-simple's own
 * `createTableIfMissing` caches a failed check for the life of the process, so a first request during an
 * outage would break sessions until a restart; it is therefore left off.)
 */
async function ensureSessionTable(pool: pg.Pool, schema: string, table: string): Promise<void> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`example-app:sessions:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}"."${table}" (
      "sid" varchar NOT NULL COLLATE "default" PRIMARY KEY,
      "sess" json NOT NULL,
      "expire" timestamp(6) NOT NULL)`);
    await client.query(`CREATE INDEX IF NOT EXISTS "${table}_expire_idx" ON "${schema}"."${table}" ("expire")`);
    await client.query('COMMIT');
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(failure);
  }
}

async function createPostgresSessionStore(storeUrl: string, timeoutMs: number, logger: SessionStoreOptions['logger'] & object): Promise<AppSessionStore> {
  const { url: withoutSchema, value } = splitUrl(storeUrl, 'schema');
  const { url, value: tablePrefix = '' } = splitUrl(withoutSchema, 'table_prefix');
  const schema = value ?? 'oauth';
  if (!IDENTIFIER.test(schema)) throw new TypeError('OAUTH_STORE: the "schema" parameter must be a plain identifier');
  if (!TABLE_PREFIX.test(tablePrefix)) throw new TypeError('OAUTH_STORE: the "table_prefix" parameter must be letters, digits and _');
  const table = `${tablePrefix}${SESSION_TABLE}`;
  const pool = new pg.Pool({
    connectionString: url,
    max: 5,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    keepAlive: true,
  });
  // Without a listener an idle connection's error (database restart) would crash the process.
  pool.on('error', (err) => logger.warn('example app: idle PostgreSQL session connection lost', err));
  try {
    await ensureSessionTable(pool, schema, table);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  const PgSession = connectPgSimple(session);
  const inner = new PgSession({
    pool,
    schemaName: schema,
    tableName: table,
    createTableIfMissing: false,
    errorLog: (message: string, err?: unknown) => logger.warn(`example app: ${message}`, err),
  });
  let closed = false;
  return {
    // A failed query is released with its error, so node-postgres drops that connection by itself.
    store: new GuardedSessionStore(inner, timeoutMs, () => undefined),
    description: `postgres (table "${schema}"."${table}")`,
    shared: true,
    async close() {
      if (closed) return;
      closed = true;
      await inner.close(); // stops the prune timer; the pool is ours, not connect-pg-simple's
      await pool.end();
    },
  };
}

async function createRedisSessionStore(storeUrl: string, timeoutMs: number, logger: SessionStoreOptions['logger'] & object): Promise<AppSessionStore> {
  const { url, value } = splitUrl(storeUrl, 'prefix');
  const prefix = `${value ?? 'oauth:'}${SESSION_KEY_SUFFIX}`;
  // The same fail-fast, self-healing connection as the OAuth store's, so logins and tokens ride out an
  // outage alike. Like the OAuth store's calls (`bounded` in src/stores/redis/index.ts), each session call first
  // makes a lost connection again and waits for it: without that, a Redis answering again saw every session call
  // refused ("The client is closed") until the background backoff (up to 2 s) ended, while tokens were served.
  const connection = await connectResilientRedis({ url, timeoutMs, logger, label: 'example app: Redis session' });
  const inner = new RedisStore({ client: connection.client, prefix });
  return {
    store: new GuardedSessionStore(inner, timeoutMs, () => connection.probe(), () => connection.reconnect()),
    description: `redis (key prefix ${prefix})`,
    shared: true,
    close: () => connection.close(),
  };
}

/** Sessions on a Redis Cluster (`redis+cluster://…`): one key per session, so they spread over the masters. */
async function createRedisClusterSessionStore(storeUrl: string, timeoutMs: number, logger: SessionStoreOptions['logger'] & object): Promise<AppSessionStore> {
  const { rootNodes, prefix: value } = parseRedisClusterUrl(storeUrl);
  const prefix = `${value ?? 'oauth:'}${SESSION_KEY_SUFFIX}`;
  // As the OAuth store's calls on a cluster, each session call first makes its key's node's lost connection again and
  // waits for it, and one that times out has that node PINGed: without that, a cluster answering again saw session
  // calls refused until the background backoff (up to 2 s) ended, and after a hang under steady use, time out for ever.
  const connection = await connectResilientRedisCluster({ rootNodes, timeoutMs, logger, label: 'example app: Redis Cluster session' });
  const inner = new RedisStore({ client: connection.cluster, prefix });
  const key = (sid: string): string => `${prefix}${sid}`;
  return {
    store: new GuardedSessionStore(inner, timeoutMs, (sid) => connection.probe(key(sid), false), (sid) => connection.reconnect(key(sid), false)),
    description: `redis cluster (key prefix ${prefix})`,
    shared: true,
    close: () => connection.close(),
  };
}

/**
 * The session store for an OAUTH_STORE URL: `redis://…` → connect-redis (keys `<prefix>sess:<sid>`, next to
 * the OAuth store's `?prefix=`, default `oauth:`); `postgres://…` → connect-pg-simple (table
 * `<schema>.sessions`, the OAuth store's `?schema=`, default `oauth`); anything else → the router's default
 * MemorySessionStore (bounded, expired sessions swept; never express-session's MemoryStore, which never sweeps
 * and which the router refuses under NODE_ENV=production), which only one process can use. Instances sharing sessions also need one SESSION_SECRET.
 * @throws when the database cannot be reached at start-up.
 */
export async function createSessionStore(storeUrl: string, options: SessionStoreOptions = {}): Promise<AppSessionStore> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const logger = options.logger ?? consoleStoreLogger;
  const scheme = storeUrl.trim().slice(0, Math.max(0, storeUrl.trim().indexOf(':'))).toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return createPostgresSessionStore(storeUrl.trim(), timeoutMs, logger);
  if (scheme === 'redis' || scheme === 'rediss') return createRedisSessionStore(storeUrl.trim(), timeoutMs, logger);
  if (scheme === 'redis+cluster' || scheme === 'rediss+cluster') return createRedisClusterSessionStore(storeUrl.trim(), timeoutMs, logger);
  return { store: undefined, description: 'memory (this process only)', shared: false, close: async () => undefined };
}
