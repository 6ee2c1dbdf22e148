// Turns SQLite's transient failures (locked, busy, disk, closed) into StoreUnavailableError, so the router answers 503.
import { StoreUnavailableError } from '../store-unavailable-error.js';

/**
 * Result-code prefixes that describe the environment, not a bug: another process held the lock longer
 * than the store waits (see lock-wait.ts), the disk failed or filled up, the file cannot be opened or written. A constraint
 * violation or SQL error is a bug and is rethrown as it is.
 */
const TRANSIENT_CODES = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CANTOPEN', 'SQLITE_READONLY'];

function transientKind(err: unknown): string | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && TRANSIENT_CODES.some((prefix) => code.startsWith(prefix))) return code;
  // better-sqlite3 throws a TypeError with this message once the connection is closed (shutdown).
  if (err instanceof TypeError && /database connection is not open/.test(err.message)) return 'closed';
  return null;
}

/**
 * True when the error only says that another connection holds a lock right now (SQLITE_BUSY, SQLITE_LOCKED
 * and their extended codes, such as SQLITE_BUSY_SNAPSHOT): the operation did nothing and may be run again.
 * @see RFC 6749 §5.2 (`temporarily_unavailable` only once the wait is over).
 */
export function isLockBusy(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * The error a store call rejects with: transient failures become StoreUnavailableError with the driver's
 * error as `cause`, anything else (a bug) is returned as it is. The message names the failure kind only,
 * never a parameter (hashes, ids), so it is safe in logs; `detail` adds how long a lock was waited for.
 * @see RFC 6749 §4.1.2.1, §5.2 (`temporarily_unavailable`, `server_error`).
 */
export function toStoreError(err: unknown, detail = ''): unknown {
  const kind = transientKind(err);
  if (kind === null) return err;
  return new StoreUnavailableError(`SQLite store unavailable (${kind}${detail})`, { cause: err });
}

/**
 * Runs one synchronous better-sqlite3 operation once, mapping its failure with `toStoreError`.
 * @throws StoreUnavailableError for transient failures, the original error otherwise.
 * @see RFC 6749 §4.1.2.1, §5.2 (`temporarily_unavailable`, `server_error`).
 */
export function runSqlite<T>(operation: () => T): T {
  try {
    return operation();
  } catch (err) {
    throw toStoreError(err);
  }
}
