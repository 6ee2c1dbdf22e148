// Turns SQLite's failures of its environment (locked, busy, disk, damaged file, closed) into StoreUnavailableError, so the router answers 503.
import { StoreUnavailableError } from '../store-unavailable-error.js';

/**
 * Result-code prefixes that describe the environment, not a bug: another process held the lock longer
 * than the store waits (see lock-wait.ts), the disk failed or filled up, the file cannot be opened or written, or a
 * page read back is damaged (SQLITE_CORRUPT: also what SQLite reports for every write after the disk answered one with
 * EIO, though the file on it is sound; an outside run that shut the filesystem down under load had 4,348 of 4,638
 * requests answered 500). A constraint violation or SQL error is a bug and is rethrown as it is. SQLITE_NOTADB (a
 * file that is no database at all) is left as it is: it is met when the store opens, whose error says "file is not a
 * database"; a file replaced under a running store is the file guard's.
 */
const TRANSIENT_CODES = [
  'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_CORRUPT',
];

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

/** Result-code prefixes of a file that fails the store whatever the moment: it cannot be read, written or opened. */
const STORAGE_FAILURE_CODES = ['SQLITE_IOERR', 'SQLITE_CORRUPT', 'SQLITE_READONLY', 'SQLITE_CANTOPEN'];

/**
 * True when the error says the store's file itself failed (an I/O error, a damaged page, a file or filesystem
 * that takes no writes), rather than a lock (which passes), a full disk (which passes once there is room) or a bug.
 * @see write-health.ts (readiness), RFC 6749 §5.2 (`temporarily_unavailable`).
 */
export function isStorageFailure(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && STORAGE_FAILURE_CODES.some((prefix) => code.startsWith(prefix));
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
