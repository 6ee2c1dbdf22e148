// The one error a Store throws when its backend cannot be reached, so the router can answer 503.

/**
 * Thrown by a Store when its database or cache is unreachable, shutting down, or too slow to answer within
 * the configured timeout: a transient outage, not a bug. The router maps it to HTTP 503 with
 * `temporarily_unavailable` (RFC 6749 §4.1.2.1, §5.2), never exposing `message` or `cause` to the client.
 *
 * `cause` holds the driver's original error for the host's logs. The message never contains a secret:
 * stores build it from the failure kind, not from query parameters.
 * @see RFC 6749 §4.1.2.1 (`temporarily_unavailable`), RFC 9110 §15.6.4 (503 Service Unavailable).
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** Stable constant for `switch` in host code, like the OAuth error codes. */
  readonly code = 'OAUTH_STORE_UNAVAILABLE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Type guard that also works across duplicated copies of the package (checks the name, not the prototype). */
export function isStoreUnavailableError(err: unknown): err is StoreUnavailableError {
  return err instanceof StoreUnavailableError || (err instanceof Error && err.name === 'StoreUnavailableError');
}

/** Node socket error codes that mean "the server is not there (right now)", for every networked store. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
