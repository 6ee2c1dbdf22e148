// The query runner the PostgreSQL store goes through: prepared statements, timeouts, outage mapping.
import { createHash, hash } from 'node:crypto';
import type { PostgresClient, PostgresPoolConnection, PostgresQueryConfig, PostgresQueryResult, PostgresRow } from './driver.js';
import { isPostgresConnectionBroken, isPostgresUnavailable, rethrowPostgresError } from './errors.js';
import { StoreUnavailableError } from '../store-unavailable-error.js';

/** A statement with a stable prepared-statement name derived from its text. */
export interface PreparedSql {
  readonly text: string;
  readonly name: string;
}

/**
 * Names a statement after a hash of its text, so that node-postgres parses it once per connection, and
 * two stores with different schemas sharing one pool never collide on a name.
 */
export function prepareSql(text: string): PreparedSql {
  return { text, name: `eor_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` };
}

/** Nothing to do with the error itself: the next statement on the broken connection rejects, and is answered 503. */
function ignoreConnectionError(): void {}

/**
 * A checked-out client with an `'error'` listener until it is released. pg's pool listens only to idle
 * clients; a connection that breaks between two statements of a transaction (a terminated backend, a reset,
 * a failover) emits `'error'` with no listener, and Node ends the host process for it. Held here, the error
 * surfaces as the next statement's rejection, which the transaction discards the connection for.
 * @see DESIGN §2 (a store outage is a 503, never a crash).
 */
function listenedWhileOut(client: PostgresClient): PostgresClient {
  client.on?.('error', ignoreConnectionError);
  return {
    query: (config, values) => client.query(config, values),
    release(err) {
      client.removeListener?.('error', ignoreConnectionError);
      client.release(err);
    },
  };
}

/** Runs prepared statements inside a transaction that `PostgresRunner.transaction` opened. */
export interface PostgresTransaction {
  query<R extends PostgresRow>(sql: PreparedSql, values: readonly unknown[]): Promise<PostgresQueryResult<R>>;
}

/** Transaction-scoped advisory locks taken before the transaction's first statement (see `lockKey`). */
export interface AdvisoryLocks {
  readonly shared?: readonly bigint[];
  readonly exclusive?: readonly bigint[];
}

/**
 * Runs one statement, or a callback inside one transaction, on the store's pool.
 *
 * `sendBy` (a `performance.now()` moment; a batched call's, batcher.ts): the statement is sent by then or never. The
 * wait for a pooled connection is given up at that moment (a connection that comes later goes back unused) and the
 * call rejects with StoreUnavailableError, nothing sent; once sent, the statement has `queryTimeoutMs` as any other
 * (a transaction: its statements share `queryTimeoutMs` from `sendBy`), so the call settles by `sendBy` plus
 * `queryTimeoutMs`. Undefined or `Infinity`: no such moment.
 */
export interface PostgresRunner {
  query<R extends PostgresRow>(sql: PreparedSql, values: readonly unknown[], sendBy?: number): Promise<PostgresQueryResult<R>>;
  /**
   * `query` for a statement that changes nothing (a plain SELECT): sent again, on another pooled connection, when
   * the one it drew broke under it (a terminated backend), within the call's own bound. Never for a write.
   */
  read<R extends PostgresRow>(sql: PreparedSql, values: readonly unknown[], sendBy?: number): Promise<PostgresQueryResult<R>>;
  /**
   * BEGIN (READ COMMITTED, statement_timeout = the query timeout) and the advisory locks in one round trip,
   * then `fn`'s statements, then COMMIT; ROLLBACK and rethrow on failure. Each statement of `fn` takes its
   * snapshot after the locks are granted, so it sees everything committed by the holders it waited for.
   */
  transaction<T>(fn: (tx: PostgresTransaction) => Promise<T>, locks?: AdvisoryLocks, sendBy?: number): Promise<T>;
  /** A dedicated connection (for migrations); release it with `release(err?)`. */
  connect(): Promise<PostgresClient>;
}

/**
 * A 64-bit advisory-lock key for `parts` within `namespace` (one store's tables), from SHA-256: two
 * instances of one store derive the same key, two stores rarely share one (a shared key only costs waiting).
 * The key is the digest's first 8 bytes read as a signed big-endian integer, as every version has derived it
 * (instances of two versions share the locks during a rolling upgrade). A user's key is derived on every save
 * with a user, so the one-shot `hash` in hex is used: about 0.5 µs, against 1.4–2.4 µs for a `createHash`
 * object and its Buffer.
 */
export function lockKey(namespace: string, ...parts: readonly string[]): bigint {
  return BigInt.asIntN(64, BigInt(`0x${hash('sha256', JSON.stringify([namespace, ...parts])).slice(0, 16)}`));
}

/**
 * The statement that opens a transaction: plain text, since the simple protocol is what lets BEGIN, SET and
 * the locks share one round trip. Only numbers are spliced in (the keys are bigints, quoted so that
 * -2^63 parses), never a value from a caller.
 */
function beginSql(timeoutMs: number, locks: AdvisoryLocks): string {
  const calls = [
    ...(locks.shared ?? []).map((key) => `pg_advisory_xact_lock_shared('${BigInt.asIntN(64, key)}'::bigint)`),
    ...(locks.exclusive ?? []).map((key) => `pg_advisory_xact_lock('${BigInt.asIntN(64, key)}'::bigint)`),
  ];
  const lock = calls.length > 0 ? `; SELECT ${calls.join(', ')}` : '';
  return `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL statement_timeout = ${Math.ceil(timeoutMs)}${lock}`;
}

/**
 * Builds the runner. `queryTimeoutMs` becomes node-postgres's client-side `query_timeout` on every query.
 * When the pool has no `connectionTimeoutMillis` (a host pool: node-postgres then waits for a connection
 * forever), every call also races a deadline so that an unreachable database fails fast with
 * StoreUnavailableError instead of hanging the request.
 */
export function createPostgresRunner(pool: PostgresPoolConnection, queryTimeoutMs: number): PostgresRunner {
  const connectTimeout = (pool.options as { connectionTimeoutMillis?: number }).connectionTimeoutMillis;
  const deadlineMs = connectTimeout ? 0 : queryTimeoutMs * 2;

  function withDeadline<T>(promise: Promise<T>, onLate?: (value: T) => void): Promise<T> {
    if (!deadlineMs) return promise;
    return new Promise<T>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new StoreUnavailableError(`PostgreSQL store unavailable (no answer within ${deadlineMs} ms)`));
      }, deadlineMs);
      promise.then(
        (value) => {
          clearTimeout(timer);
          if (late) onLate?.(value);
          else resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          if (!late) reject(err);
        },
      );
    });
  }

  /**
   * A pooled connection by `sendBy`, or StoreUnavailableError then (a connection that arrives later goes straight
   * back to the pool): what lets a batched call fail with nothing sent rather than send a statement late.
   */
  function connectBy(sendBy: number): Promise<PostgresClient> {
    const ms = Math.floor(sendBy - performance.now());
    if (ms < 1) return Promise.reject(new StoreUnavailableError('PostgreSQL store unavailable (no time left to send the call; nothing sent)'));
    return new Promise<PostgresClient>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new StoreUnavailableError(`PostgreSQL store unavailable (no pooled connection within ${ms} ms; nothing sent)`));
      }, ms);
      pool.connect().then(
        (client) => {
          clearTimeout(timer);
          if (late) client.release();
          else resolve(listenedWhileOut(client));
        },
        (err: unknown) => {
          clearTimeout(timer);
          if (!late) reject(err);
        },
      );
    });
  }

  /** `connectBy` when there is a moment to send by, else the pool's own wait (or the runner's deadline). */
  const bounded = (sendBy: number | undefined): sendBy is number => sendBy !== undefined && Number.isFinite(sendBy);

  async function connect(): Promise<PostgresClient> {
    let client: PostgresClient;
    try {
      // A connection that arrives after the deadline goes straight back to the pool.
      client = await withDeadline(pool.connect(), (late) => late.release());
    } catch (err) {
      return rethrowPostgresError(err);
    }
    return listenedWhileOut(client);
  }

  function configOf(sql: PreparedSql, values: readonly unknown[], timeoutMs: number): PostgresQueryConfig {
    return { text: sql.text, name: sql.name, values: values as unknown[], query_timeout: timeoutMs };
  }

  // Every pooled connection may be one that was ended with the first (pg_terminate_backend of a database's idle
  // backends, a restart): up to one more attempt for each.
  const poolSize = (pool.options as { max?: number }).max ?? 10;

  /**
   * A read, sent again while the connection it drew broke under it. pg's pool discards a connection whose query
   * failed, so each attempt goes out on another. A connection ended by `pg_terminate_backend` or a restart stays in
   * the pool until its end is read, and a call made meanwhile draws it: the statement changed nothing, whether or
   * not it reached the server, so it is sent again rather than answered 503. Once is not enough: ending a pool's 4
   * idle backends, then reading at once, failed 56 of 60 reads with no retry, 25–30 with one, 14 with two, 0 with
   * three (pg's pool hands out its idle connections newest first, each ended, its end still on its way). So up to
   * the pool's size more attempts, each on a connection that had not yet failed, and only while the error is a
   * broken connection: a timeout, a refused connection or an error of the statement ends the read at once. Each
   * attempt's query timeout is what is left of `queryTimeoutMs` since the read began (and the deadline, when there
   * is one, covers them all), so a read answers within the bound a single query has.
   */
  async function readAgainOnBreak<R extends PostgresRow>(
    sql: PreparedSql, values: readonly unknown[], sendBy?: number,
  ): Promise<PostgresQueryResult<R>> {
    let started = performance.now();
    let timeoutMs = queryTimeoutMs;
    for (let retries = poolSize; ; retries -= 1) {
      // Drawn here rather than by pool.query, so that a connection that fails as it opens is told apart: behind an
      // address that accepts and closes every connection (HAProxy or a pooler with no server up), each new one fails
      // as the first did, and sending the read again made the pool's size more connection attempts per read. The
      // read's own deadline (when there is one) covers the wait: one that comes late still runs and is released.
      // With `sendBy`, the first attempt is sent by then and the read has queryTimeoutMs from it; another attempt
      // must find its connection within what is left of that.
      let client: PostgresClient;
      if (bounded(sendBy)) {
        const first = retries === poolSize;
        client = await connectBy(first ? sendBy : started + queryTimeoutMs);
        if (first) started = performance.now();
        timeoutMs = Math.floor(queryTimeoutMs - (performance.now() - started));
        if (timeoutMs < 1) {
          client.release();
          throw new StoreUnavailableError('PostgreSQL store unavailable (no time left to read again)');
        }
      } else {
        client = listenedWhileOut(await pool.connect());
      }
      try {
        const result = await client.query<R>(configOf(sql, values, timeoutMs));
        client.release();
        return result;
      } catch (err) {
        // pg's pool discards a connection released with an error, so the next attempt draws another.
        client.release(err instanceof Error ? err : new Error(String(err)));
        timeoutMs = Math.floor(queryTimeoutMs - (performance.now() - started));
        if (retries < 1 || timeoutMs < 1 || !isPostgresConnectionBroken(err)) throw err;
      }
    }
  }

  return {
    async query<R extends PostgresRow>(sql: PreparedSql, values: readonly unknown[], sendBy?: number) {
      if (!bounded(sendBy)) {
        try {
          return await withDeadline(pool.query<R>(configOf(sql, values, queryTimeoutMs)));
        } catch (err) {
          return rethrowPostgresError(err);
        }
      }
      let client: PostgresClient;
      try {
        client = await connectBy(sendBy);
      } catch (err) {
        return rethrowPostgresError(err);
      }
      try {
        const result = await client.query<R>(configOf(sql, values, queryTimeoutMs));
        client.release();
        return result;
      } catch (err) {
        // As pool.query does: a connection whose statement failed is discarded.
        client.release(err instanceof Error ? err : new Error(String(err)));
        return rethrowPostgresError(err);
      }
    },

    async read<R extends PostgresRow>(sql: PreparedSql, values: readonly unknown[], sendBy?: number) {
      try {
        return bounded(sendBy) ? await readAgainOnBreak<R>(sql, values, sendBy) : await withDeadline(readAgainOnBreak<R>(sql, values));
      } catch (err) {
        return rethrowPostgresError(err);
      }
    },

    async transaction<T>(fn: (tx: PostgresTransaction) => Promise<T>, locks: AdvisoryLocks = {}, sendBy?: number): Promise<T> {
      let client: PostgresClient;
      if (bounded(sendBy)) {
        try {
          client = await connectBy(sendBy);
        } catch (err) {
          return rethrowPostgresError(err);
        }
      } else {
        client = await connect();
      }
      // With `sendBy`, the statements share queryTimeoutMs from it: one left unanswered is given up (the connection
      // discarded, so the server rolls back what COMMIT had not reached), and none is sent once that is spent.
      const end = bounded(sendBy) ? sendBy + queryTimeoutMs : undefined;
      const run = (text: string, values?: readonly unknown[], name?: string) => {
        const timeoutMs = end === undefined ? queryTimeoutMs : Math.floor(end - performance.now());
        if (timeoutMs < 1) return Promise.reject(new StoreUnavailableError('PostgreSQL store unavailable (no time left for the transaction\'s next statement)'));
        return client.query({
          text,
          ...(name !== undefined ? { name } : {}),
          ...(values !== undefined ? { values: values as unknown[] } : {}),
          query_timeout: timeoutMs,
        });
      };
      try {
        await run(beginSql(queryTimeoutMs, locks));
        const result = await fn({
          query: <R extends PostgresRow>(sql: PreparedSql, values: readonly unknown[]) =>
            run(sql.text, values, sql.name) as Promise<PostgresQueryResult<R>>,
        });
        await run('COMMIT');
        client.release();
        return result;
      } catch (err) {
        // A connection that timed out or broke is discarded (the server then rolls back and drops the
        // locks); ROLLBACK on it would queue behind the statement that never answered.
        const broken = isPostgresUnavailable(err) || !(await run('ROLLBACK').then(() => true, () => false));
        client.release(broken ? (err instanceof Error ? err : new Error(String(err))) : undefined);
        return rethrowPostgresError(err);
      }
    },

    connect,
  };
}
