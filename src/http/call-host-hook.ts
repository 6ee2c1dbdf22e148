// A UserAuth hook that throws is an outage of the host's user directory, as the contract says: 503, not a bug's 500.
import { OAuthError } from '../errors.js';
import { isStoreUnavailableError, StoreUnavailableError } from '../stores/store-unavailable-error.js';

/**
 * Calls a host's UserAuth hook (`verifyCredentials`, `currentUser`, `findUser`), which the README asks to throw only
 * on outages, and turns what it throws into a StoreUnavailableError: the endpoints answer 503
 * `temporarily_unavailable` (a token request may be retried, a page says "try again later") and log it once per
 * outage, as a store outage, with the hook's name and the error's name and message (no request data). An answer
 * the hook gives that breaks the contract (an invalid user) is still the host's bug, a 500, judged by the caller.
 * @see RFC 6749 §4.1.2.1 and §5.2 (temporarily_unavailable), RFC 9110 §15.6.4 (503).
 */
export async function callHostHook<T>(hook: 'verifyCredentials' | 'currentUser' | 'findUser', call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof OAuthError || isStoreUnavailableError(err)) throw err;
    const what = err instanceof Error ? `${err.name}: ${err.message}` : typeof err;
    throw new StoreUnavailableError(`UserAuth.${hook} threw ${what}`, { cause: err });
  }
}
