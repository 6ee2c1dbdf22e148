// OAuth errors: one base class and one subclass per error code the RFCs name.
import { toErrorDescription } from './http/error-description.js';
import type { ClientAuthFailure } from './events/event-types.js';

/** Every error code this package can answer with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'unsupported_token_type'
  | 'login_required'
  | 'consent_required';

/**
 * Base class. `status` is the HTTP status; `expose` says whether `error_description` may reach the client
 * (only for status < 500: internals never leak); `allowRedirect` is false when the error must not be sent
 * to a redirect_uri (RFC 6749 §4.1.2.1: unknown client or bad redirect_uri).
 */
export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly expose: boolean;
  readonly allowRedirect: boolean = true;

  constructor(error: OAuthErrorCode, description: string, status = 400) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
    this.status = status;
    this.expose = status < 500;
  }

  /** `OAUTH_INVALID_GRANT` style constant, for `switch` in host code. */
  get code(): string {
    return `OAUTH_${this.error.toUpperCase()}`;
  }
}

/** "The request is missing a required parameter, includes an unsupported parameter value (other than grant
 * type), repeats a parameter, includes multiple credentials, … or is otherwise malformed." RFC 6749 §5.2 */
export class InvalidRequestError extends OAuthError {
  constructor(description: string) {
    super('invalid_request', description, 400);
  }
}

/** "Client authentication failed (e.g., unknown client, no client authentication included, or unsupported
 * authentication method)." RFC 6749 §5.2 — always 401 with a Basic challenge: RFC 9110 §15.5.2 requires
 * WWW-Authenticate on every 401, whichever method the client tried. */
export class InvalidClientError extends OAuthError {
  /** Why, for the server's own audit event only (`client.authentication_failed`); never sent to the client. */
  readonly reason: ClientAuthFailure;
  /**
   * The client_id of the credentials' reading that was refused, when a Basic header had two (SPEC §2's and RFC 6749
   * §2.3.1's, see `parseBasicCredentials`): what the audit event and the failure count name. Unset: the one presented.
   */
  presentedClientId?: string;
  constructor(description = 'client authentication failed', reason: ClientAuthFailure = 'wrong_secret') {
    super('invalid_client', description, 401);
    this.reason = reason;
  }
}

/** "The provided authorization grant … or refresh token is invalid, expired, revoked, does not match the
 * redirection URI used in the authorization request, or was issued to another client." RFC 6749 §5.2 */
export class InvalidGrantError extends OAuthError {
  constructor(description: string) {
    super('invalid_grant', description, 400);
  }
}

/**
 * The store refused to save the tokens (`saveTokens` resolved false): a revocation overtook the request, or the
 * integration copy it was authenticated with is no longer the stored one. Answered as `invalid_grant`.
 * @see RFC 6749 §5.2, RFC 7009 §2.1.
 */
export class RefusedSaveError extends InvalidGrantError {
  constructor() {
    super('the authorization grant has been revoked');
  }
}

/**
 * A grant refused by the integration's current settings (a redirect URI no longer registered, PKCE now required, a
 * scope it may no longer be granted) rather than by the grant itself. Answered as `invalid_grant`; a request served
 * from an integration copy, which may hold older settings, is judged again against the integration looked up.
 * @see RFC 6749 §5.2, RFC 7636 §4.4.1.
 */
export class SettingsRefusalError extends InvalidGrantError {}

/** "The authenticated client is not authorized to use this authorization grant type." RFC 6749 §5.2 */
export class UnauthorizedClientError extends OAuthError {
  constructor(description: string) {
    super('unauthorized_client', description, 400);
  }
}

/** "The authorization grant type is not supported by the authorization server." RFC 6749 §5.2 */
export class UnsupportedGrantTypeError extends OAuthError {
  constructor(description: string) {
    super('unsupported_grant_type', description, 400);
  }
}

/** "The requested scope is invalid, unknown, malformed, or exceeds the scope granted by the resource
 * owner." RFC 6749 §5.2, §4.1.2.1 */
export class InvalidScopeError extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', description, 400);
  }
}

/** "The resource owner or authorization server denied the request." RFC 6749 §4.1.2.1 */
export class AccessDeniedError extends OAuthError {
  constructor(description = 'the user denied the request') {
    super('access_denied', description, 403);
  }
}

/** "The authorization server does not support obtaining an authorization code using this method."
 * RFC 6749 §4.1.2.1 */
export class UnsupportedResponseTypeError extends OAuthError {
  constructor(description: string) {
    super('unsupported_response_type', description, 400);
  }
}

/** An error of the authorization endpoint that must never be redirected (RFC 6749 §4.1.2.1: "the
 * authorization server SHOULD inform the resource owner of the error and MUST NOT automatically redirect
 * the user-agent to the invalid redirection URI"). */
export class InvalidRedirectTargetError extends OAuthError {
  override readonly allowRedirect = false;
  constructor(error: OAuthErrorCode, description: string) {
    super(error, description, 400);
  }
}

/**
 * An authorization request with `prompt=none` that would need a page: `login_required` (nobody is signed in) or
 * `consent_required` (no remembered consent covers it). The codes OpenID Connect Core §3.1.2.6 defines and the IANA
 * OAuth Extensions Error Registry lists, which clients checking silently already handle.
 */
export class InteractionRequiredError extends OAuthError {
  constructor(error: 'login_required' | 'consent_required', description: string) {
    super(error, description, 400);
  }
}

/** "The authorization server encountered an unexpected condition." RFC 6749 §4.1.2.1, §5.2 (via 500). */
export class ServerError extends OAuthError {
  constructor(description = 'internal server error') {
    super('server_error', description, 500);
  }
}

/** "The authorization server is currently unable to handle the request due to a temporary overloading or
 * maintenance." RFC 6749 §4.1.2.1 — answered with 503 when the store is unreachable. */
export class TemporarilyUnavailableError extends OAuthError {
  // Saying "try later" reveals nothing internal, and tells the client to retry rather than give up.
  override readonly expose = true;
  constructor(description = 'the authorization server is temporarily unavailable') {
    super('temporarily_unavailable', description, 503);
  }
}

/**
 * Too many failed sign-ins or client authentications from this source: 429 (RFC 6585 §4) with `Retry-After`.
 * The code is `temporarily_unavailable`: RFC 6749 has no code for a rate limit, and `invalid_client` would tell
 * a client holding the right secret that its secret is wrong; "try again later" is what this code says, and
 * what this server already answers when it cannot serve a token request (503). `slow_down` belongs to device
 * polling (RFC 8628 §3.5). @see RFC 6819 §4.3.5, §4.4.3.6, §5.1.4.2.3.
 */
export class TooManyAttemptsError extends OAuthError {
  override readonly expose = true;
  /** Whole seconds until the window that refused the attempt ends, at least 1: the `Retry-After` value. */
  readonly retryAfterSeconds: number;
  constructor(description: string, retryAfterMs: number) {
    super('temporarily_unavailable', description, 429);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  }
}

/** "The access token provided is expired, revoked, malformed, or invalid for other reasons." RFC 6750 §3.1 */
export class InvalidTokenError extends OAuthError {
  constructor(description: string) {
    super('invalid_token', description, 401);
  }
}

/** "The request requires higher privileges than provided by the access token." RFC 6750 §3.1 */
export class InsufficientScopeError extends OAuthError {
  constructor(description: string) {
    super('insufficient_scope', description, 403);
  }
}

/**
 * A request body the server will not read: too large, with too many fields, in a charset or
 * `Content-Encoding` it does not decode, or not complete in time. At the token, revocation and introspection
 * endpoints it is `invalid_request` with 400 (RFC 6749 §5.2: "responds with an HTTP 400 … unless specified
 * otherwise"), except a body that never finished arriving: 408, since no OAuth request was ever received
 * (RFC 9110 §15.5.9). The HTML pages, which no OAuth client parses, answer `pageStatus`, the RFC 9110 status.
 */
export class UnreadableBodyError extends OAuthError {
  /**
   * 408 (not complete in time), 413 (too large, too many fields), 415 (charset, Content-Encoding) or 501 (a
   * Transfer-Encoding other than chunked).
   */
  readonly pageStatus: 408 | 413 | 415 | 501;
  constructor(description: string, pageStatus: 408 | 413 | 415 | 501) {
    super('invalid_request', description, pageStatus === 408 ? 408 : 400);
    this.pageStatus = pageStatus;
  }
}

/** `{ error, error_description }` with the description held to RFC 6749 §5.2's character set. */
export function oauthErrorBody(error: string, description: string): { error: string; error_description: string } {
  return { error, error_description: toErrorDescription(description) };
}

/** The JSON body of an error response (RFC 6749 §5.2). Descriptions of non-exposed errors are replaced. */
export function toErrorBody(err: OAuthError): { error: string; error_description: string } {
  return oauthErrorBody(err.error, err.expose ? err.message : 'the server encountered an unexpected condition');
}
