// The one door to MariaDB: a mysql2 pool with per-query timeouts, READ COMMITTED transactions and outage mapping.
import mysql from 'mysql2/promise';
import type { PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import type { PoolConnection as CoreConnection } from 'mysql2';
import { rethrowMariaDbError } from './errors.js';
import type { ResolvedMariaDbOptions } from './options.js';

/** What a store part may run: plain statements, each on a pooled connection or all inside one transaction. */
export interface Queryable {
  /** Runs a SELECT and resolves its rows. */
  rows<T extends object>(sql: string, values?: readonly unknown[]): Promise<T[]>;
  /** Runs an INSERT, UPDATE or DELETE and resolves its header (`affectedRows` counts matched rows). */
  run(sql: string, values?: readonly unknown[]): Promise<ResultSetHeader>;
}

/** The store's database: statements, transactions, and `end()` for `close()`. */
export interface MariaDb extends Queryable {
  /** START TRANSACTION … COMMIT on one connection; ROLLBACK and rethrow on failure. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  end(): Promise<void>;
}

/** InnoDB picks a deadlock victim and rolls it back whole; retrying it at once is the documented remedy. */
const DEADLOCK_ATTEMPTS = 3;

function codeOf(err: unknown): unknown {
  return (err as { code?: unknown } | null)?.code;
}

/**
 * Whether the connection must not be reused: mysql2 marks an error after which it is dead as `fatal`, and
 * after its query timeout the connection is still waiting for the late answer (mysql2 neither closes it
 * nor returns it to the pool: left alone, ten timeouts would exhaust the pool for good).
 */
function isBroken(err: unknown): boolean {
  return (err as { fatal?: unknown } | null)?.fatal === true || codeOf(err) === 'PROTOCOL_SEQUENCE_TIMEOUT';
}

/**
 * Opens the pool. Every connection starts in READ COMMITTED: locking reads then lock only the rows they
 * find (no gap locks, so no deadlock between two first-time inserts of the same lock row), and every
 * statement sees what committed before it. The store's correctness rests on row locks, never on snapshots.
 * Lock waits give up after about half the query timeout, as ER_LOCK_WAIT_TIMEOUT: a StoreUnavailableError.
 */
export function openMariaDb(options: ResolvedMariaDbOptions): MariaDb {
  const raw = options.faults.rawDriverErrors === true;
  const timeout = options.queryTimeoutMs;
  const lockWaitSeconds = Math.max(1, Math.floor(timeout / 2000));
  const pool = mysql.createPool({
    uri: options.url,
    connectionLimit: options.maxConnections,
    connectTimeout: timeout,
    // Dates go in and out as UTC with milliseconds (DATETIME(3)), whatever the server's or the host's zone.
    timezone: 'Z',
    // Keeps a dead peer from holding a pooled connection forever when the network drops silently.
    enableKeepAlive: true,
  });
  pool.pool.on('connection', (conn: CoreConnection) => {
    const fail = (err: Error | null) => err && conn.destroy();
    conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', fail);
    conn.query(`SET SESSION innodb_lock_wait_timeout = ${lockWaitSeconds}`, fail);
  });

  function on(conn: PoolConnection): Queryable {
    return {
      async rows<T extends object>(sql: string, values: readonly unknown[] = []) {
        const [rows] = await conn.query<RowDataPacket[]>({ sql, values: [...values], timeout });
        return rows as unknown as T[];
      },
      async run(sql: string, values: readonly unknown[] = []) {
        const [header] = await conn.query<ResultSetHeader>({ sql, values: [...values], timeout });
        return header;
      },
    };
  }

  /** Runs `use` on a connection of its own; a broken connection is destroyed, never handed out again. */
  async function withConnection<T>(use: (q: Queryable) => Promise<T>): Promise<T> {
    const conn = await pool.getConnection();
    let broken = false;
    try {
      return await use(on(conn));
    } catch (err) {
      broken = isBroken(err);
      throw err;
    } finally {
      if (broken) conn.destroy();
      else conn.release();
    }
  }

  function once<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return withConnection(async (tx) => {
      await tx.run('START TRANSACTION');
      try {
        const result = await fn(tx);
        await tx.run('COMMIT');
        return result;
      } catch (err) {
        // If the ROLLBACK fails too, its error (a lost connection) replaces this one, and the connection goes.
        if (!isBroken(err)) await tx.run('ROLLBACK');
        throw err;
      }
    });
  }

  const mapped = <T>(work: Promise<T>): Promise<T> => work.catch((err: unknown) => rethrowMariaDbError(err, raw));
  return {
    rows: <T extends object>(sql: string, values?: readonly unknown[]) => mapped(withConnection((q) => q.rows<T>(sql, values))),
    run: (sql: string, values?: readonly unknown[]) => mapped(withConnection((q) => q.run(sql, values))),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(fn);
        } catch (err) {
          if (attempt < DEADLOCK_ATTEMPTS && codeOf(err) === 'ER_LOCK_DEADLOCK') continue;
          return rethrowMariaDbError(err, raw);
        }
      }
    },
    end: () => pool.end(),
  };
}
