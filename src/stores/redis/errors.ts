// Tells a Redis outage (offline client, refused connection, timeout, loading) apart from a bug, for the 503 mapping.
import { NETWORK_ERROR_CODES, StoreUnavailableError } from '../store-unavailable-error.js';

/**
 * Messages of node-redis v5's connection errors (ClientOfflineError, ClientClosedError,
 * ConnectionTimeoutError, SocketTimeoutError, SocketClosedUnexpectedlyError, TimeoutError,
 * ReconnectStrategyError): it sets no `name` or `code` on them, and matching text also works when the host
 * has its own copy of the library, where `instanceof` would fail.
 */
const CLIENT_MESSAGES = [
  'The client is offline',
  'The client is closed',
  'Connection timeout',
  'Socket timeout',
  'Socket closed unexpectedly',
  // In-flight commands of a connection the store dropped because it stopped answering.
  'Disconnects client',
  'Command timeout',
  'Timeout',
  // RootNodesUnavailableError: a cluster client that reached none of the nodes it was given.
  'All the root nodes are unavailable',
];

/**
 * Server replies of a Redis that is starting, failing over or busy: retrying later will work. Of one that refuses
 * writes for now: full (`OOM`, maxmemory reached under `noeviction`, the policy the README asks for), unable to
 * persist (`MISCONF`, a failed RDB save with `stop-writes-on-bgsave-error`) or short of replicas (`NOREPLICAS`,
 * `min-replicas-to-write`). And of one that refuses the store's credentials (`WRONGPASS`, `NOAUTH`: a password
 * rotated on the server first): the store is out of reach as configured. All a 503 and `store_unavailable`, not a
 * bug's 500, and logged once per outage, not once per request.
 */
const TRANSIENT_REPLIES = [
  'LOADING', 'BUSY', 'MASTERDOWN', 'TRYAGAIN', 'CLUSTERDOWN', 'READONLY', 'OOM', 'MISCONF', 'NOREPLICAS', 'WRONGPASS', 'NOAUTH',
];

/**
 * The reply a command inside a script met, as Redis before 7 wraps it: `ERR Error running script (call to f_<sha>):
 * @user_script:41: @user_script: 41: -OOM command not allowed when used memory > 'maxmemory'.` gives `OOM …`.
 * Redis 7 passes the inner reply on as the script's own (`OOM command not allowed …`).
 */
function innerScriptReply(message: string): string | null {
  const match = /^ERR Error running script \(call to f_[0-9a-f]+\): (?:@user_script:\s*\d+:\s*)+-(.*)$/s.exec(message);
  return match ? match[1]! : null;
}

/** True when `err` says Redis is unreachable or not serving right now, as opposed to a bad command. */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof StoreUnavailableError) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
  if (err instanceof AggregateError) return err.errors.some(isRedisUnavailable);
  // ReconnectStrategyError wraps the socket error that made the strategy give up.
  if ('originalError' in err && isRedisUnavailable((err as { originalError: unknown }).originalError)) return true;
  const message = err.message;
  const reply = innerScriptReply(message) ?? message;
  return (
    CLIENT_MESSAGES.some((m) => message.startsWith(m)) || TRANSIENT_REPLIES.some((m) => reply.startsWith(`${m} `))
  );
}

/** The socket code (`ECONNREFUSED`), also from under a ReconnectStrategyError, else the message's first phrase. */
function failureKind(err: Error): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const inner = (err as { originalError?: { code?: unknown } }).originalError;
  if (typeof inner?.code === 'string') return inner.code;
  // A server reply starts with its code in capitals (`WRONGPASS invalid username-password pair…`): that alone.
  const reply = /^[A-Z]{3,}(?= )/.exec(innerScriptReply(err.message) ?? err.message);
  if (reply) return reply[0];
  return err.message.split(/[.:]/)[0] ?? err.message;
}

/**
 * Rethrows connection-type failures as StoreUnavailableError (the router answers 503) and anything else
 * unchanged. The message names the failure kind only: never a key, which would hold a token hash.
 * @throws always.
 */
export function rethrowRedisError(err: unknown): never {
  if (err instanceof StoreUnavailableError) throw err;
  if (isRedisUnavailable(err)) {
    throw new StoreUnavailableError(`Redis store unavailable (${failureKind(err as Error)})`, { cause: err });
  }
  throw err;
}
