// Tells a PostgreSQL outage (connection refused, shutdown, timeout) apart from a bug, for the 503 mapping.
import { NETWORK_ERROR_CODES, StoreUnavailableError } from '../store-unavailable-error.js';

/**
 * SQLSTATEs of a server that is going away, not accepting connections, or that cancelled a statement on
 * statement_timeout; of lock contention (a deadlock broken, a lock wait given up, a serialization failure under a
 * host's stricter isolation); of a server that takes no writes (25006: a standby, or a primary demoted by a
 * failover that the pool still reaches, or `default_transaction_read_only`) or cannot write them (58030: an I/O
 * error): transient, worth a retry, never a bug. And of a server that refuses the connection as configured
 * (28000, 28P01: the credentials; 3D000: no such database): the store is out of reach, a 503 and
 * `store_unavailable`, not a bug's 500. Classes 08 (connection exception) and 53 (insufficient resources: a full
 * disk, out of memory, too many connections) are matched by prefix.
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '40P01', '40001', '55P03', '25006', '58030', '28000', '28P01', '3D000']);

/** What pg-pool throws at a call made after its end(). */
const CLOSED_POOL = 'Cannot use a pool after calling end on the pool';

/** Messages node-postgres uses for its own timeouts and dead connections (it sets no code on them). */
const PG_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Query read timeout',
  'Client has encountered a connection error',
  'Connection terminated due to connection timeout',
  // `sslmode=require` against a server without TLS: out of reach as configured, like refused credentials.
  'The server does not support SSL connections',
  // pg-pool's answer once end() was called: the store's close() (a host shutting down), or a host ending its own pool.
  CLOSED_POOL,
];

/**
 * Plain words for the SQLSTATEs an operator meets when a store is configured wrong or the server is going away, so a
 * `store_unavailable` from the CLI or a log line says what to fix without the server's own message (which names
 * roles and databases, and may be translated).
 */
const SQLSTATE_WORDS: Readonly<Record<string, string>> = {
  '3D000': 'no such database',
  '28P01': 'password authentication failed',
  '28000': 'the server refused this role or host (pg_hba.conf)',
  // admin_shutdown is what a fast shutdown and pg_terminate_backend() both send, with one message for both.
  '57P01': 'the server ended the connection: a shutdown, or pg_terminate_backend',
  '57P03': 'the server is starting up or not accepting connections',
  '53300': 'too many connections',
  '25006': 'the server takes no writes (a standby, or read-only)',
};

/**
 * PgBouncer's refusal of a startup parameter it does not know (`unsupported startup parameter: statement_timeout`,
 * 08P01; its messages are never translated): the pool the store makes sends `statement_timeout` at connection start,
 * so the store behind a PgBouncer with default settings never opens. Only a plain parameter name is taken from the
 * message.
 */
const UNSUPPORTED_STARTUP_PARAMETER = /^unsupported startup parameter: ([a-z_]{1,63})$/;

/** The words for a failure whose SQLSTATE alone says too little, or undefined. */
function wordsFor(err: Error, code: string): string | undefined {
  if (code === '08P01') {
    const parameter = UNSUPPORTED_STARTUP_PARAMETER.exec(err.message)?.[1];
    if (parameter) {
      return `the server or pooler refuses the startup parameter ${parameter}; PgBouncer: add it to ignore_startup_parameters`;
    }
  }
  return SQLSTATE_WORDS[code];
}

/** True when `err` says the database is unreachable or unresponsive, as opposed to a bad query. */
export function isPostgresUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof StoreUnavailableError) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_ERROR_CODES.has(code) || SQLSTATES.has(code) || /^(?:08|53)[0-9A-Z]{3}$/.test(code)) return true;
    // A database that takes no connections for now (ALLOW_CONNECTIONS false, a maintenance window): 55000 is also
    // what some statements' misuse raises, so only the one the server's session start sends counts (its routine,
    // unlike its message, is never translated).
    if (code === '55000' && (err as { routine?: unknown }).routine === 'CheckMyDatabase') return true;
  }
  // AggregateError: Node's happy-eyeballs connect reports every refused address at once.
  if (err instanceof AggregateError) return err.errors.some(isPostgresUnavailable);
  return PG_MESSAGES.some((m) => err.message.startsWith(m));
}

/**
 * Rethrows connection-type failures as StoreUnavailableError (the router answers 503) and anything else
 * unchanged (a bug, answered 500). The message names only the failure kind: never a query or parameter.
 * @throws always.
 */
export function rethrowPostgresError(err: unknown): never {
  if (err instanceof StoreUnavailableError) throw err;
  if (isPostgresUnavailable(err)) {
    const code = (err as { code?: string }).code;
    const words = code === undefined ? undefined : wordsFor(err as Error, code);
    const kind = code === undefined ? ((err as Error).message === CLOSED_POOL ? 'closed' : (err as Error).message)
      : words ? `${code}: ${words}` : code;
    throw new StoreUnavailableError(`PostgreSQL store unavailable (${kind})`, { cause: err });
  }
  throw err;
}

/**
 * SQLSTATEs and node-postgres messages of a connection that broke under a statement (its backend terminated,
 * `pg_terminate_backend` or a restart; the socket reset): what a read may be sent again for, on another
 * connection. Not a timeout (`57014`, `Query read timeout`, a connection that never came): one more wait would
 * outlast the bound a 503 is promised within. Not a refused connection: another would be refused too.
 */
const BROKEN_SQLSTATES = new Set(['57P01', '57P02', '08003', '08006']);
const BROKEN_NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE']);
const BROKEN_MESSAGES = ['Connection terminated unexpectedly', 'Client has encountered a connection error and is not queryable'];

/** True when `err` says the connection a statement ran on broke, as opposed to a timeout or an unreachable server. */
export function isPostgresConnectionBroken(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return BROKEN_SQLSTATES.has(code) || BROKEN_NETWORK_CODES.has(code);
  return BROKEN_MESSAGES.some((m) => err.message.startsWith(m));
}
