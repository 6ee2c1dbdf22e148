// Turns anything thrown into an OAuthError that is safe to show: internals never reach the client.
import { OAuthError, ServerError, TemporarilyUnavailableError } from '../errors.js';
import { isStoreUnavailableError } from '../stores/store-unavailable-error.js';
import { HostHookUnavailableError } from './call-host-hook.js';
import { logStoreUnavailable, type OutageSource } from './store-outage-log.js';
import { logUnexpectedError } from './log-unexpected-error.js';

export { STORE_ERROR_LOG_INTERVAL_MS } from './error-log-interval.js';

/**
 * OAuthErrors pass through; a store outage (an error named `StoreUnavailableError`, thrown by the built-in
 * stores and recommended for custom ones) becomes 503 `temporarily_unavailable`, logged once per
 * `STORE_ERROR_LOG_INTERVAL_MS` with a count of the rest by cause (an outage under load wrote a line per request: 800
 * in 35 s per instance; the metrics still count each); anything else becomes 500 `server_error` and is logged by name
 * and message only (no request data, so no secrets), once per name and message per interval with a count of the rest
 * (a dropped schema wrote a line per request). `source` is the router's options: its logger, and its store's outage lines.
 * @see RFC 6749 §4.1.2.1 (server_error, temporarily_unavailable), §5.2; README, `logger` option.
 */
export function toOAuthError(err: unknown, source: OutageSource): OAuthError {
  if (err instanceof OAuthError) return err;
  const name = err instanceof Error ? err.name : typeof err;
  const message = err instanceof Error ? err.message : String(err);
  if (isStoreUnavailableError(err)) {
    logStoreUnavailable(source, message, !(err instanceof HostHookUnavailableError));
    return new TemporarilyUnavailableError();
  }
  logUnexpectedError(source.logger, name, message);
  return new ServerError();
}
