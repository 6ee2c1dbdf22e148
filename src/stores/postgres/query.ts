// The query runner the PostgreSQL store goes through: prepared statements, timeouts, outage mapping.
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { rethrowPostgresError } from './errors.js';
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

/** Runs one statement, or a callback inside one transaction, on the store's pool. */
export interface PostgresRunner {
  query<R extends QueryResultRow>(sql: PreparedSql, values: readonly unknown[]): Promise<QueryResult<R>>;
  /** BEGIN … COMMIT on one connection; ROLLBACK and rethrow on failure. */
  transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T>;
  /** A dedicated connection (for migrations); release it with `release(err?)`. */
  connect(): Promise<PoolClient>;
}

/**
 * Builds the runner. `queryTimeoutMs` becomes node-postgres's client-side `query_timeout` on every query.
 * When the pool has no `connectionTimeoutMillis` (a host pool: node-postgres then waits for a connection
 * forever), every call also races a deadline so that an unreachable database fails fast with
 * StoreUnavailableError instead of hanging the request.
 */
export function createPostgresRunner(pool: Pool, queryTimeoutMs: number): PostgresRunner {
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
      timer.unref();
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

  async function connect(): Promise<PoolClient> {
    try {
      // A connection that arrives after the deadline goes straight back to the pool.
      return await withDeadline(pool.connect(), (client) => client.release());
    } catch (err) {
      return rethrowPostgresError(err);
    }
  }

  return {
    async query<R extends QueryResultRow>(sql: PreparedSql, values: readonly unknown[]) {
      const config: QueryConfig & { query_timeout: number } = {
        text: sql.text,
        name: sql.name,
        values: values as unknown[],
        query_timeout: queryTimeoutMs,
      };
      try {
        return await withDeadline(pool.query<R>(config));
      } catch (err) {
        return rethrowPostgresError(err);
      }
    },

    async transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
      const client = await connect();
      let failure: unknown;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        failure = err;
        await client.query('ROLLBACK').catch(() => undefined);
        return rethrowPostgresError(err);
      } finally {
        // Releasing with the error makes the pool discard a connection that may be broken.
        client.release(failure instanceof Error ? failure : undefined);
      }
    },

    connect,
  };
}
