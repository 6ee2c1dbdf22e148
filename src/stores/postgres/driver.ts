// The part of node-postgres (pg 8) the PostgreSQL store uses, typed here so the published types need no @types/pg.
import { importDriver, type StoreDriver } from '../missing-driver.js';

/** A row as node-postgres returns it: column name to value. @see DESIGN §2 (the PostgreSQL store). */
export type PostgresRow = Record<string, any>;

/** What a query answers (pg `QueryResult`). @see DESIGN §2. */
export interface PostgresQueryResult<R extends PostgresRow = PostgresRow> {
  readonly rows: R[];
  readonly rowCount: number | null;
}

/** A query with a prepared-statement name and a client-side timeout (pg `QueryConfig`). @see DESIGN §3a. */
export interface PostgresQueryConfig {
  readonly text: string;
  readonly name?: string;
  readonly values?: unknown[];
  readonly query_timeout?: number;
}

/** A connection taken from the pool (pg `PoolClient`); `release(err)` discards a broken one. @see DESIGN §2. */
export interface PostgresClient {
  query<R extends PostgresRow = PostgresRow>(
    config: PostgresQueryConfig | string,
    values?: unknown[],
  ): Promise<PostgresQueryResult<R>>;
  release(err?: Error | boolean): void;
  /** pg's `Client` is an EventEmitter: a connection error between statements is emitted as `'error'`. */
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * A node-postgres (pg 8) `Pool` the host owns: what `createPostgresStore({ pool })` accepts. Only the
 * members the store calls, loosely typed, so pg's own overloads fit without `@types/pg` in the host.
 * @see DESIGN §2 (the PostgreSQL store: many instances share one database).
 */
export interface PostgresPool {
  /** The pool's settings; the store reads `connectionTimeoutMillis`. */
  readonly options: object;
  connect(): Promise<unknown>;
  query(config: any): Promise<unknown>;
  end(): Promise<void>;
}

/** The same pool as the store's code sees it: typed queries and connections. @see DESIGN §2. */
export interface PostgresPoolConnection extends PostgresPool {
  connect(): Promise<PostgresClient>;
  query<R extends PostgresRow = PostgresRow>(config: PostgresQueryConfig): Promise<PostgresQueryResult<R>>;
  /** pg's Pool is an EventEmitter; a host's pool typed as PostgresPool need not be (a wrapper, a test double). */
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

/** The settings a pool the store makes is given (a subset of pg `PoolConfig`). */
interface PostgresPoolConfig {
  readonly connectionString: string | undefined;
  readonly max: number;
  readonly connectionTimeoutMillis: number;
  readonly query_timeout: number;
  readonly statement_timeout: number;
  readonly keepAlive: boolean;
}

const PG: StoreDriver = { store: 'PostgreSQL', name: 'pg', major: 8 };

/**
 * Makes a node-postgres pool, loading `pg` only now: hosts of the other stores need not install it.
 * @throws Error "The PostgreSQL store needs pg: npm install pg@8" when it is missing.
 * @see DESIGN §2 (the PostgreSQL store).
 */
export async function createPostgresPool(config: PostgresPoolConfig): Promise<PostgresPoolConnection> {
  const pg = await importDriver<{ default: { Pool: new (config: PostgresPoolConfig) => PostgresPoolConnection } }>(PG);
  return new pg.default.Pool(config);
}

/** A dedicated connection (pg `Client`) for LISTEN: never taken from the pool, so it never starves it. */
export interface PostgresListenerClient {
  connect(): Promise<void>;
  query(config: PostgresQueryConfig | string): Promise<PostgresQueryResult>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (err?: Error) => void): unknown;
}

/** What makes a listener connection: a pg `Client` class and the settings to give it. */
type ListenerClientClass = new (config: object) => PostgresListenerClient;

/**
 * Makes a `pg.Client` with the settings of `pool`: a pool the store made, or a host's pg `Pool` (its
 * `options`, and its `Client` class, e.g. pg-native's), so the listener reaches the same database the same way.
 * @see DESIGN §2 (the PostgreSQL store).
 */
export async function createPostgresListenerClient(pool: PostgresPool, applicationName: string): Promise<PostgresListenerClient> {
  const own = (pool as { Client?: ListenerClientClass }).Client;
  const Client = own ?? (await importDriver<{ default: { Client: ListenerClientClass } }>(PG)).default.Client;
  return new Client({ ...pool.options, keepAlive: true, application_name: applicationName });
}
