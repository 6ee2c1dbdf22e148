// A UserAuth hook's outage (a StoreUnavailableError, a socket error) answered as one: 503, not a bug's 500.
import { isStoreUnavailableError, NETWORK_ERROR_CODES, StoreUnavailableError } from '../stores/store-unavailable-error.js';

/**
 * Calls a host's UserAuth hook (`verifyCredentials`, `currentUser`, `findUser`). What it throws that says its user
 * directory is out of reach, a StoreUnavailableError or an error with a socket code (`ECONNREFUSED`, `ETIMEDOUT`:
 * NETWORK_ERROR_CODES), is rethrown as a StoreUnavailableError naming the hook, the error's name and its code only
 * (its message may quote what the user typed, or a connection string): the endpoints answer 503
 * `temporarily_unavailable` and log it once per outage, as a store outage. Anything else it throws is a bug of the
 * host's: a 500, logged as unexpected with the hook, the error's name and code, not its message (the thrown error is
 * the `cause`).
 * @see RFC 6749 §4.1.2.1 (temporarily_unavailable), RFC 9110 §15.6.4 (503); at the token endpoint the same 503 a store
 * outage gets (RFC 6749 §5.2 names no code for it).
 */
export async function callHostHook<T>(hook: 'verifyCredentials' | 'currentUser' | 'findUser', call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    // The deadline's own error (boundUserAuth) says which hook did not answer, and quotes nothing the host wrote.
    if (err instanceof HostHookUnavailableError) throw err;
    const code = (err as { code?: unknown } | null)?.code;
    const name = err instanceof Error ? err.name : typeof err;
    const what = `${name}${typeof code === 'string' ? ` (${code})` : ''}`;
    // A host's own StoreUnavailableError too: the README tells hosts to wrap their driver's outages in it, and that
    // message may quote what the user typed. Rethrown as the hook's: its end is the host directory's, not the store's.
    if (isStoreUnavailableError(err) || (typeof code === 'string' && NETWORK_ERROR_CODES.has(code))) {
      throw new HostHookUnavailableError(`UserAuth.${hook} unavailable: ${what}`, { cause: err });
    }
    // Logged by toOAuthError as unexpected: its name and code, not its message, which may quote what the user typed
    // (a driver's "invalid input syntax for type uuid: \"<the password typed as a username>\"").
    throw new HostHookError(`UserAuth.${hook} threw ${what}`, { cause: err });
  }
}

/** What a UserAuth hook threw that is no outage: a bug of the host's, named without the original message. */
export class HostHookError extends Error {
  override readonly name = 'HostHookError';
}

/**
 * A UserAuth hook's outage: a StoreUnavailableError (503, logged as an outage) whose lines are throttled apart from the
 * store's, and whose end a store's answer does not announce. README, `logger` option; RFC 6749 §4.1.2.1.
 */
export class HostHookUnavailableError extends StoreUnavailableError {}
