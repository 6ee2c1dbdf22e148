// Turns anything thrown into an OAuthError that is safe to show: internals never reach the client.
import { OAuthError, ServerError, TemporarilyUnavailableError } from '../errors.js';
import type { Logger } from '../options.js';
import { isStoreUnavailableError } from '../stores/store-unavailable-error.js';

/**
 * OAuthErrors pass through; a store outage (an error named `StoreUnavailableError`, thrown by the built-in
 * stores and recommended for custom ones) becomes 503 `temporarily_unavailable`; anything else becomes
 * 500 `server_error` and is logged by name and message only (no request data, so no secrets).
 * @see RFC 6749 §4.1.2.1 (server_error, temporarily_unavailable), §5.2.
 */
export function toOAuthError(err: unknown, logger: Logger): OAuthError {
  if (err instanceof OAuthError) return err;
  const name = err instanceof Error ? err.name : typeof err;
  const message = err instanceof Error ? err.message : String(err);
  if (isStoreUnavailableError(err)) {
    logger.error(`express-oauth-router: store unavailable: ${message}`);
    return new TemporarilyUnavailableError();
  }
  logger.error(`express-oauth-router: unexpected ${name}: ${message}`);
  return new ServerError();
}
