// The audit events the authorization server reports: one typed record per security-relevant happening.
import type { GrantType, TokenEndpointAuthMethod } from '../stores/contract.js';

/**
 * What every event carries. Ids only: an event never holds a secret, a code, a token, a password or a hash
 * of one, so every event may be written to a log as it is.
 * @see RFC 9700 §4.14 (detecting abuse needs records), RFC 6819 §5.1.4.1.1 (no secrets in logs).
 */
export interface OAuthEventBase {
  /** When it happened (the server's clock). */
  readonly time: Date;
  /** The base address the request came in at (SPEC §9); `null` for the admin API and the CLI. */
  readonly issuer: string | null;
  /** The request's source address as Express sees it (`req.ip`, so `trust proxy` decides); `null` off HTTP. */
  readonly ip: string | null;
}

/** Tokens issued by the token endpoint (RFC 6749 §5.1): authorization_code or client_credentials. */
export interface TokenIssuedEvent extends OAuthEventBase {
  readonly type: 'token.issued';
  readonly grantType: Exclude<GrantType, 'refresh_token'>;
  readonly clientId: string;
  /** `null` for client_credentials. */
  readonly userId: string | null;
  readonly grantId: string;
  readonly scope: readonly string[];
  /** Whether a refresh token was issued with the access token. */
  readonly refreshToken: boolean;
}

/** A new access token for a refresh token (RFC 6749 §6). */
export interface TokenRefreshedEvent extends OAuthEventBase {
  readonly type: 'token.refreshed';
  readonly grantType: 'refresh_token';
  readonly clientId: string;
  readonly userId: string | null;
  readonly grantId: string;
  readonly scope: readonly string[];
  readonly refreshToken: boolean;
}

/** Why tokens were revoked. */
export type RevocationCause =
  | 'revocation_endpoint' // RFC 7009 §2.1
  | 'code_replay' // RFC 6749 §4.1.2
  | 'consent_withdrawn'
  | 'client_disabled'
  | 'client_secret_rotated'
  | 'client_scopes_narrowed' // an update took a scope away, or scoped an all-access integration
  | 'client_deleted'
  | 'user_deleted' // the user behind a grant is gone (`userAuth.findUser`)
  | 'undelivered' // saved for a token request answered by the host meanwhile (connect-timeout's 503) or whose client hung up: no client has them
  | 'admin';

/** Tokens revoked: one token, one grant, an integration's, or a user's (RFC 7009 §2.1). */
export interface TokenRevokedEvent extends OAuthEventBase {
  readonly type: 'token.revoked';
  readonly cause: RevocationCause;
  /** What was revoked: one access token, every token of a grant, of an integration, or of a user at one or at every integration. */
  readonly extent: 'token' | 'grant' | 'client' | 'user';
  /** `null` only for a user's tokens at every integration. */
  readonly clientId: string | null;
  readonly userId: string | null;
  readonly grantId: string | null;
}

/** A used authorization code presented again; its grant's tokens are revoked (RFC 6749 §4.1.2, §10.5). */
export interface CodeReplayedEvent extends OAuthEventBase {
  readonly type: 'code.replayed';
  /** The authenticated client that presented the code (the used code's record is gone). */
  readonly clientId: string;
  readonly grantId: string;
}

/** Why a client did not authenticate (RFC 6749 §2.3, §5.2 `invalid_client`). */
export type ClientAuthFailure =
  | 'unknown_client' | 'wrong_secret' | 'disabled' | 'method_not_allowed' | 'no_credentials'
  | 'malformed_credentials' | 'wrong_issuer';

/** A client failed to authenticate at the token, revocation or introspection endpoint. */
export interface ClientAuthenticationFailedEvent extends OAuthEventBase {
  readonly type: 'client.authentication_failed';
  readonly endpoint: 'token' | 'revocation' | 'introspection';
  /** The client_id presented, when it names an integration (`wrong_secret`, `disabled`, `method_not_allowed`,
   * `wrong_issuer`); else `null`: an id that names none may be a secret typed in the wrong place. */
  readonly clientId: string | null;
  readonly method: TokenEndpointAuthMethod | null;
  readonly reason: ClientAuthFailure;
}

/** A user signed in on the login page. */
export interface LoginSucceededEvent extends OAuthEventBase {
  readonly type: 'login.succeeded';
  readonly userId: string;
  /** The integration whose authorization request led to the login, when known. */
  readonly clientId: string | null;
}

/** A sign-in was refused. The username typed is not reported: users type passwords into it. */
export interface LoginFailedEvent extends OAuthEventBase {
  readonly type: 'login.failed';
  readonly reason: 'bad_credentials' | 'rate_limited' | 'csrf';
  readonly clientId: string | null;
}

/** A user approved an integration on the consent page. */
export interface ConsentGrantedEvent extends OAuthEventBase {
  readonly type: 'consent.granted';
  readonly userId: string;
  readonly clientId: string;
  readonly scope: readonly string[];
}

/** A user (or the host for them) withdrew an integration's consent; its tokens for the user are revoked. */
export interface ConsentWithdrawnEvent extends OAuthEventBase {
  readonly type: 'consent.withdrawn';
  readonly userId: string;
  readonly clientId: string;
}

/** An integration's registration changed (RFC 7591 §3 terms; the admin API and the CLI). */
export interface ClientLifecycleEvent extends OAuthEventBase {
  readonly type:
    | 'client.created' | 'client.updated' | 'client.disabled' | 'client.enabled' | 'client.secret_rotated'
    | 'client.deleted';
  readonly clientId: string;
  /** For `client.updated`: the names of the fields changed (camelCase, as in `ClientChanges`), never values. */
  readonly fields?: readonly string[];
  /** For `client.secret_rotated`: until when the previous secret still works, `null` when it stopped at once. */
  readonly previousSecretValidUntil?: Date | null;
  /** For `client.created`: true when it came from `clients import`. */
  readonly imported?: boolean;
}

/**
 * Store-kept JWT signing keys replaced as leaked (`rotateSigningKey({ leaked: true })`, `oauth-admin keys
 * replace-leaked`): tokens signed with the deleted keys stop verifying. Kids are public (RFC 7638 thumbprints).
 * @see RFC 9068 §4, RFC 9700 §4.10.
 */
export interface SigningKeysReplacedEvent extends OAuthEventBase {
  readonly type: 'signing_keys.replaced';
  /**
   * The key this call made. It is in `deleted` when a replacement at the same moment made a newer key, which signs
   * instead (`signingKid`): a consumer recording the key that signs reads `signingKid`, not this.
   */
  readonly kid: string;
  /**
   * The key that signs once this call is done (`ReplacedSigningKeys.signingKid`): `kid`, or the newer key of a
   * replacement at the same moment. `null` when `complete` is false: the replacement is not done, and running it
   * again makes another key.
   */
  readonly signingKid: string | null;
  /** The keys whose records this call deleted. */
  readonly deleted: readonly string[];
  /**
   * False when the store failed after the new key was saved (SigningKeysReplacementIncompleteError, a store without
   * `keys.replaceSigningKeys` only): the keys not in `deleted` still verify, and the caller was told it failed.
   * Replacing the keys again finishes it.
   */
  readonly complete: boolean;
}

/** A rate limit refused a request (RFC 6585 §4, RFC 6819 §4.4.3.6). */
export interface RateLimitHitEvent extends OAuthEventBase {
  readonly type: 'rate_limit.hit';
  readonly limit: 'login' | 'client_authentication';
  /** `login`: the integration of the authorization request, when known. `client_authentication`: always
   * `null` (refused before any lookup, the id presented may be a secret); the failures before it name it. */
  readonly clientId: string | null;
}

/** Every audit event. Switch on `type`. */
export type OAuthEvent =
  | TokenIssuedEvent | TokenRefreshedEvent | TokenRevokedEvent | CodeReplayedEvent
  | ClientAuthenticationFailedEvent | LoginSucceededEvent | LoginFailedEvent
  | ConsentGrantedEvent | ConsentWithdrawnEvent | ClientLifecycleEvent | RateLimitHitEvent | SigningKeysReplacedEvent;

/** Every event type name. */
export type OAuthEventType = OAuthEvent['type'];

/** The event of one type name. */
// `infer E` makes the union a type parameter, so the test on E distributes over its members: an event interface whose
// `type` is itself a union (ClientLifecycleEvent) is narrowed to the one name, which `Extract` would drop. Written
// inline, not through a helper alias, so the declarations name no type that the package does not export.
export type OAuthEventOf<T extends OAuthEventType> = OAuthEvent extends infer E
  ? (E extends { readonly type: infer U } ? (T extends U ? Omit<E, 'type'> & { readonly type: T } : never) : never)
  : never;
