// Tells a MariaDB outage (unreachable, connection lost, timed out, lock wait) apart from a bug, for the 503 mapping.
import { StoreUnavailableError } from 'express-oauth-router';

/**
 * Error codes that mean "the database cannot answer right now": Node socket errors, mysql2's own codes for a
 * lost or timed-out connection, and server errors of a database that is overloaded, shutting down, or that
 * gave up waiting for a lock. Anything else (a syntax error, a duplicate key) is a bug and stays as it is.
 * @see https://mariadb.com/kb/en/mariadb-error-code-reference/
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK', 'ER_STATEMENT_TIMEOUT', 'ER_QUERY_INTERRUPTED',
  'ER_CON_COUNT_ERROR', 'ER_TOO_MANY_USER_CONNECTIONS', 'ER_SERVER_SHUTDOWN', 'ER_CONNECTION_KILLED',
  'ER_OUT_OF_RESOURCES',
]);

/** True when `err` says the database is unreachable or unresponsive, as opposed to a bad query. */
export function isMariaDbUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  // Node's happy-eyeballs connect reports every refused address at once.
  if (err instanceof AggregateError) return err.errors.some(isMariaDbUnavailable);
  const { code, fatal } = err as { code?: unknown; fatal?: unknown };
  // mysql2 marks every error after which the connection is dead as fatal: a network failure, not a query's.
  return fatal === true || (typeof code === 'string' && UNAVAILABLE_CODES.has(code));
}

/**
 * Rethrows outage-type failures as StoreUnavailableError (the router answers 503) and anything else unchanged
 * (a bug, answered 500). The message names only the failure kind, never a query or a parameter (ids, hashes).
 * With `raw` (the `rawDriverErrors` fault) it rethrows everything unchanged: the bug the suite must catch.
 * @see RFC 6749 §5.2 and §4.1.2.1 (`temporarily_unavailable`).
 * @throws always.
 */
export function rethrowMariaDbError(err: unknown, raw = false): never {
  if (!raw && !(err instanceof StoreUnavailableError) && isMariaDbUnavailable(err)) {
    const kind = (err as { code?: unknown }).code;
    throw new StoreUnavailableError(`MariaDB store unavailable (${typeof kind === 'string' ? kind : 'no answer'})`, {
      cause: err,
    });
  }
  throw err;
}
