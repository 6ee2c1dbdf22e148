// Opens the Store named by a URL (the OAUTH_STORE syntax), so the app and the CLI share one setting.
import { resolve } from 'node:path';
import type { CompleteStore } from './contract.js';
import type { SqliteSynchronous } from './sqlite/index.js';
import type { StoreWarningLogger } from './console-store-logger.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from './redis/replica-wait.js';
import { checkIntegrationCopies } from './integration-copies-option.js';

/** The embedded default: one SQLite file under the working directory. @see RFC 6749 §10.3, §10.5. */
export const DEFAULT_STORE_URL = 'sqlite:./data/oauth.sqlite';

const SUPPORTED = 'sqlite:PATH, memory:, postgres://…, postgresql://…, redis://…, rediss://…, redis+cluster://…';

/** Options of `createStoreFromUrl`. */
export interface StoreFromUrlOptions {
  /**
   * Open an existing store only: for `sqlite:` no file or directory is created, and a missing file or one that
   * holds no store throws an Error with `code: 'ENOENT'` (see `SqliteStoreOptions.fileMustExist`); for PostgreSQL no schema or table
   * is created, and a schema and prefix without the store's tables throw an Error with `code: 'ENOENT'`
   * (`PostgresStoreOptions.mustExist`). Redis keeps nothing until the first write, and `memory:` is fresh:
   * they ignore it. Default false.
   */
  readonly mustExist?: boolean;
  /**
   * For `sqlite:`, create a store in a new or empty file only: a file with other data and no store (another
   * application's database) throws an Error with `code: 'EEXIST'` (`SqliteStoreOptions.refuseForeignFile`).
   * The other stores keep their tables or keys apart by schema, prefix or key prefix, and ignore it. Default false.
   */
  readonly refuseForeignFile?: boolean;
  /**
   * Where the PostgreSQL, Redis and SQLite stores report connection losses and background failures (their `logger`
   * option); the memory store reports none. Default: one line per warning on stderr (`consoleStoreLogger`).
   */
  readonly logger?: StoreWarningLogger;
}

/**
 * The file path of a `sqlite:` URL. `sqlite:./data/oauth.sqlite` and `sqlite:/abs/oauth.sqlite` are the
 * documented forms; `sqlite://PATH` is also read as PATH (so `sqlite:///abs/x.sqlite` is absolute), since
 * people write it by analogy with other URLs. Relative paths resolve against the working directory.
 */
function sqlitePath(rest: string): string {
  const path = rest.startsWith('//') ? rest.slice(2) : rest;
  if (path === '') throw new TypeError('OAUTH_STORE: sqlite: needs a file path, e.g. sqlite:./data/oauth.sqlite');
  return path === ':memory:' ? path : resolve(process.cwd(), path);
}

/** The `createSqliteStore` options a `sqlite:` URL may carry after `?`, by their snake_case URL names. */
interface SqliteUrlOptions {
  synchronous?: SqliteSynchronous;
  lockTimeoutMs?: number;
  maxIntegrationCopies?: number;
}

/**
 * `max_integration_copies=N` of any store's URL, as the store's `maxIntegrationCopies`: checked here, with the option's
 * own bounds and message but naming the parameter, so a value out of range or not a whole number is refused before
 * any connection is made or file opened.
 */
function integrationCopiesOf(value: string | undefined): { maxIntegrationCopies?: number } {
  if (value === undefined) return {};
  // Digits only: `1e3`, `0x10`, ` 5` and `5.0` are refused as written, not read as numbers.
  const n = /^[0-9]{1,12}$/.test(value) ? Number(value) : value;
  return { maxIntegrationCopies: checkIntegrationCopies('OAUTH_STORE: max_integration_copies', n) };
}

/**
 * Reads the query of a `sqlite:` URL: `synchronous=full|normal`, `lock_timeout_ms=N` and `max_integration_copies=N`
 * (`SqliteStoreOptions.synchronous`, `.lockTimeoutMs`, `.maxIntegrationCopies`), so a deployment that sets only
 * OAUTH_STORE can choose them too. Anything else, a parameter given twice or empty, or a malformed value is refused by name: a typo
 * must not silently leave the default durability in place.
 */
function sqliteUrlOptions(query: string): SqliteUrlOptions {
  const params = new URLSearchParams(query);
  const options: SqliteUrlOptions = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    if (values.length > 1 || values[0] === '') throw new TypeError(`OAUTH_STORE: give the "${name}" parameter once, with a value`);
    const value = values[0]!;
    if (name === 'synchronous') {
      if (value !== 'full' && value !== 'normal') throw new TypeError('OAUTH_STORE: synchronous must be full or normal');
      options.synchronous = value;
    } else if (name === 'lock_timeout_ms') {
      if (!/^[0-9]{1,9}$/.test(value)) throw new TypeError('OAUTH_STORE: lock_timeout_ms must be a whole number of milliseconds');
      options.lockTimeoutMs = Number(value);
    } else if (name === 'max_integration_copies') {
      Object.assign(options, integrationCopiesOf(value));
    } else {
      throw new TypeError(`OAUTH_STORE: unknown sqlite: parameter "${name}"; known: synchronous, lock_timeout_ms, max_integration_copies`);
    }
  }
  return options;
}

/**
 * Takes the store's own query parameter (`schema` for PostgreSQL, `prefix` for Redis) out of a URL, so the
 * driver never sees it; every other parameter (`sslmode`, …) is left for the driver. Parsed with WHATWG URL:
 * percent-encoded passwords survive untouched. A parameter given twice, or given empty, is refused.
 */
function takeParam(url: string, scheme: string, name: string): { url: string; value: string | undefined } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // No secret in the message: the URL may carry a password.
    throw new TypeError(`OAUTH_STORE: the ${scheme}: URL is malformed`);
  }
  const value = singleValue(parsed.searchParams, name);
  if (value === undefined) return { url, value: undefined };
  parsed.searchParams.delete(name);
  return { url: parsed.toString(), value };
}

/** The one value of a store parameter, or undefined when it is absent; given twice, or given empty, it is refused. */
function singleValue(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1 || values[0] === '') throw new TypeError(`OAUTH_STORE: give the "${name}" parameter once, with a value`);
  return values[0];
}

/**
 * `wait_replicas=N&wait_timeout_ms=MS` of a Redis URL, as the store's `waitForReplicas` (both or neither): read here,
 * so a misspelt or half-given one is refused rather than ignored and revocations left unconfirmed.
 */
function replicaWaitOf(
  scheme: string, replicas: string | undefined, timeoutMs: string | undefined,
): { waitForReplicas?: { replicas: number; timeoutMs: number } } {
  if (replicas === undefined && timeoutMs === undefined) return {};
  if (replicas === undefined || timeoutMs === undefined) {
    throw new TypeError(`OAUTH_STORE: give the ${scheme}: parameters "wait_replicas" and "wait_timeout_ms" together`);
  }
  if (!/^[0-9]{1,9}$/.test(replicas) || !/^[0-9]{1,9}$/.test(timeoutMs)) {
    throw new TypeError('OAUTH_STORE: wait_replicas and wait_timeout_ms must be whole numbers (replicas, milliseconds)');
  }
  // Named here as the URL names it: the store's own message would name `commandTimeoutMs`, which a URL cannot set.
  if (Number(timeoutMs) < 1 || Number(timeoutMs) >= DEFAULT_COMMAND_TIMEOUT_MS) {
    throw new TypeError(`OAUTH_STORE: wait_timeout_ms must be from 1 to ${DEFAULT_COMMAND_TIMEOUT_MS - 1} (milliseconds, below the Redis store's command timeout, ${DEFAULT_COMMAND_TIMEOUT_MS} ms)`);
  }
  return { waitForReplicas: { replicas: Number(replicas), timeoutMs: Number(timeoutMs) } };
}

/** Parameter names that mean one of the stores' own options, once `_`/`-` are dropped and case folded. */
const STORE_PARAMETERS = new Set(['schema', 'tableprefix', 'prefix', 'keyprefix', 'waitreplicas', 'waittimeoutms', 'maxintegrationcopies']);

/** The PostgreSQL store's own URL parameters. */
const POSTGRES_PARAMETERS = ['schema', 'table_prefix', 'max_integration_copies'];

/** The Redis store's own URL parameters (see replicaWaitOf). */
const REDIS_PARAMETERS = ['prefix', 'wait_replicas', 'wait_timeout_ms', 'max_integration_copies'];

/**
 * Refuses a parameter that names a store option this scheme does not take (`tablePrefix`, `prefix` on a
 * PostgreSQL URL, `schema` on a Redis one): the driver would take it as its own and ignore it, and the store
 * would open its default tables or keys. Every other parameter (`sslmode`, `application_name`, …) is the
 * driver's and is left alone.
 */
function refuseOtherStoresParameters(url: string, scheme: string, own: readonly string[]): void {
  const query = url.indexOf('?');
  if (query === -1) return;
  for (const name of new URLSearchParams(url.slice(query + 1).split('#')[0]).keys()) {
    if (!own.includes(name) && STORE_PARAMETERS.has(name.toLowerCase().replace(/[-_]/g, ''))) {
      throw new TypeError(`OAUTH_STORE: unknown ${scheme}: parameter "${name}"; this store's own are ${own.join(', ')}`);
    }
  }
}

/**
 * Opens the store a URL names:
 * - `sqlite:./data/oauth.sqlite`, `sqlite:/abs/path.sqlite` — the SQLite store on that file (created if
 *   missing, unless `options.mustExist`; not in another application's database with `options.refuseForeignFile`); `?synchronous=normal` and `?lock_timeout_ms=N` set
 *   `SqliteStoreOptions.synchronous` and `.lockTimeoutMs` (a `?` therefore always starts the query);
 * - `memory:` — a fresh in-memory store (tests, demos: nothing survives the process);
 * - `postgres://…`, `postgresql://…`, `redis://…`, `rediss://…` — shared stores for several instances.
 *   `?schema=NAME` picks the PostgreSQL schema (default `oauth`) and `?table_prefix=STR` its table prefix
 *   (default none), `?prefix=STR` the Redis key prefix (default `oauth:`), so several deployments (or test
 *   runs) can share one server; another store's parameter (`prefix` on PostgreSQL, `schema` on Redis, a
 *   misspelt `tablePrefix`) is refused, not passed on to the driver to be ignored;
 * - on every form but `memory:`, `?max_integration_copies=N` sets the store's `maxIntegrationCopies` (an integer from
 *   1 to 10,000,000; default 10,000);
 * - `redis+cluster://host:port,host:port?prefix=STR` (`rediss+cluster://` for TLS) — the Redis store on a
 *   Redis Cluster, given some of its nodes. On both Redis forms `?wait_replicas=N&wait_timeout_ms=MS` sets
 *   `waitForReplicas` (a write no replica acknowledged answers 503: README, "Replication and failover").
 *
 * Store modules are imported on demand, so choosing one never loads another's driver (e.g. the
 * better-sqlite3 native addon for a PostgreSQL deployment). Error messages name the scheme only: the URL
 * may carry a password, and it must not reach a log line.
 *
 * @example
 * ```ts
 * const store = await createStoreFromUrl(process.env.OAUTH_STORE ?? DEFAULT_STORE_URL);
 * ```
 * @throws Error for an unsupported scheme (naming the supported ones) or a malformed URL.
 * @see RFC 6749 §10.3–10.5 (where tokens and codes are kept is the store's concern).
 */
export async function createStoreFromUrl(url: string, options: StoreFromUrlOptions = {}): Promise<CompleteStore> {
  const trimmed = url.trim();
  const colon = trimmed.indexOf(':');
  const scheme = colon > 0 ? trimmed.slice(0, colon).toLowerCase() : '';
  const rest = trimmed.slice(colon + 1);
  const logger = options.logger ? { logger: options.logger } : {};

  switch (scheme) {
    case 'sqlite': {
      const question = rest.indexOf('?');
      const filename = sqlitePath(question === -1 ? rest : rest.slice(0, question));
      const urlOptions = question === -1 ? {} : sqliteUrlOptions(rest.slice(question + 1));
      const { createSqliteStore } = await import('./sqlite/index.js');
      return createSqliteStore({ filename, fileMustExist: options.mustExist === true, refuseForeignFile: options.refuseForeignFile === true, ...urlOptions, ...logger });
    }
    case 'memory': {
      if (rest !== '' && rest !== '//') throw new TypeError('OAUTH_STORE: write the memory store as memory:');
      const { createMemoryStore } = await import('./memory/index.js');
      return createMemoryStore();
    }
    // The PostgreSQL store: `pg` is an optional peer dependency, loaded only when chosen.
    case 'postgres':
    case 'postgresql': {
      refuseOtherStoresParameters(trimmed, scheme, POSTGRES_PARAMETERS);
      const { url: withoutSchema, value: schema } = takeParam(trimmed, scheme, 'schema');
      const { url: withoutPrefix, value: tablePrefix } = takeParam(withoutSchema, scheme, 'table_prefix');
      const { url: connectionString, value: copies } = takeParam(withoutPrefix, scheme, 'max_integration_copies');
      const copiesOption = integrationCopiesOf(copies);
      const { createPostgresStore } = await import('./postgres/index.js');
      return createPostgresStore({
        connectionString,
        ...(schema !== undefined ? { schema } : {}),
        ...(tablePrefix !== undefined ? { tablePrefix } : {}),
        ...copiesOption,
        ...(options.mustExist === true ? { mustExist: true } : {}),
        ...logger,
      });
    }
    // The Redis store: `redis` is an optional peer dependency, loaded only when chosen.
    case 'redis':
    case 'rediss': {
      refuseOtherStoresParameters(trimmed, scheme, REDIS_PARAMETERS);
      const { createRedisStore } = await import('./redis/index.js');
      const { url: withoutPrefix, value: prefix } = takeParam(trimmed, scheme, 'prefix');
      const { url: withoutReplicas, value: replicas } = takeParam(withoutPrefix, scheme, 'wait_replicas');
      const { url: withoutTimeout, value: timeoutMs } = takeParam(withoutReplicas, scheme, 'wait_timeout_ms');
      const { url: redisUrl, value: copies } = takeParam(withoutTimeout, scheme, 'max_integration_copies');
      const wait = replicaWaitOf(scheme, replicas, timeoutMs);
      return createRedisStore({ url: redisUrl, ...(prefix !== undefined ? { prefix } : {}), ...wait, ...integrationCopiesOf(copies), ...logger });
    }
    case 'redis+cluster':
    case 'rediss+cluster': {
      refuseOtherStoresParameters(trimmed, scheme, REDIS_PARAMETERS);
      const [{ createRedisStore }, { parseRedisClusterUrl }] = await Promise.all([
        import('./redis/index.js'),
        import('./redis/cluster-url.js'),
      ]);
      const { rootNodes, prefix } = parseRedisClusterUrl(trimmed);
      // parseRedisClusterUrl accepted the URL, so everything after its first `?` is the query.
      const query = new URLSearchParams(trimmed.includes('?') ? trimmed.slice(trimmed.indexOf('?') + 1) : '');
      const wait = replicaWaitOf(scheme, singleValue(query, 'wait_replicas'), singleValue(query, 'wait_timeout_ms'));
      // Checked as on the other forms, though a cluster store keeps no copies (createRedisStore's maxIntegrationCopies).
      const copies = integrationCopiesOf(singleValue(query, 'max_integration_copies'));
      return createRedisStore({ cluster: { rootNodes }, ...(prefix !== undefined ? { prefix } : {}), ...wait, ...copies, ...logger });
    }
    default:
      throw new TypeError(
        // Echo the scheme only when it looks like one: in "user:pass@host" the part before ':' is no scheme.
        !/^[a-z][a-z0-9+.-]{0,19}$/.test(scheme)
          ? `OAUTH_STORE: no recognisable scheme in the store URL; supported: ${SUPPORTED}`
          : `OAUTH_STORE: unsupported store scheme "${scheme}:"; supported: ${SUPPORTED}`,
      );
  }
}
