// Turns anything thrown into an OAuthError that is safe to show: internals never reach the client.
import { OAuthError, ServerError, TemporarilyUnavailableError } from '../errors.js';
import type { Logger } from '../options.js';
import { isStoreUnavailableError } from '../stores/store-unavailable-error.js';
import { STORE_ERROR_LOG_INTERVAL_MS } from './error-log-interval.js';
import { logUnexpectedError } from './log-unexpected-error.js';

export { STORE_ERROR_LOG_INTERVAL_MS } from './error-log-interval.js';

/** Per logger: when the last store error was logged, and how many came since without a line of their own. */
const storeErrorLog = new WeakMap<Logger, { loggedAt: number; since: number }>();

/** Logs a store outage once per STORE_ERROR_LOG_INTERVAL_MS, saying how many requests it failed meanwhile. */
function logStoreUnavailable(logger: Logger, message: string): void {
  const now = Date.now();
  const last = storeErrorLog.get(logger);
  if (last && now - last.loggedAt < STORE_ERROR_LOG_INTERVAL_MS) {
    last.since += 1;
    return;
  }
  const more = last && last.since > 0 ? ` (and ${last.since} more since the last such line)` : '';
  storeErrorLog.set(logger, { loggedAt: now, since: 0 });
  logger.error(`express-oauth-router: store unavailable: ${message}${more}`);
}

/**
 * OAuthErrors pass through; a store outage (an error named `StoreUnavailableError`, thrown by the built-in
 * stores and recommended for custom ones) becomes 503 `temporarily_unavailable`, logged once per
 * `STORE_ERROR_LOG_INTERVAL_MS` with a count of the rest (an outage under load wrote a line per request: 800 in 35 s
 * per instance; the metrics still count each); anything else becomes 500 `server_error` and is logged by name
 * and message only (no request data, so no secrets), once per name and message per interval with a count of the rest
 * (a dropped schema wrote a line per request).
 * @see RFC 6749 §4.1.2.1 (server_error, temporarily_unavailable), §5.2; README, `logger` option.
 */
export function toOAuthError(err: unknown, logger: Logger): OAuthError {
  if (err instanceof OAuthError) return err;
  const name = err instanceof Error ? err.name : typeof err;
  const message = err instanceof Error ? err.message : String(err);
  if (isStoreUnavailableError(err)) {
    logStoreUnavailable(logger, message);
    return new TemporarilyUnavailableError();
  }
  logUnexpectedError(logger, name, message);
  return new ServerError();
}
