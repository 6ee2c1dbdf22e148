// The storage contract: what every Store (memory, SQLite, PostgreSQL, Redis, or the host's own) must honour.

/**
 * The two flows an integration can be configured for (SPEC §5.5). An `authorization_code` integration may
 * use the `authorization_code` and `refresh_token` grants; a `client_credentials` one only that grant.
 */
export type ClientFlow = 'authorization_code' | 'client_credentials';

/** The grant types the token endpoint serves (SPEC §4.3–4.5, RFC 6749 §4.1.3, §4.4.2, §6). */
export type GrantType = 'authorization_code' | 'client_credentials' | 'refresh_token';

/**
 * A registered integration (RFC 6749 §2). The secret is never stored: only its SHA-256, base64url.
 */
export interface OAuthClient {
  readonly clientId: string;
  /** base64url SHA-256 of the client secret (see `hashSecret`). Never the secret itself. */
  readonly clientSecretHash: string;
  /** Human-readable name shown on the consent page. */
  readonly name: string;
  readonly flow: ClientFlow;
  /** Exact-match redirect URIs (RFC 6749 §3.1.2, RFC 9700 §2.1). Empty for client_credentials. */
  readonly redirectUris: readonly string[];
  /** Scopes the integration may be granted; empty means "no scopes". */
  readonly allowedScopes: readonly string[];
  /** When true, authorization requests must carry an S256 code_challenge (RFC 7636). */
  readonly requirePkce: boolean;
  /** When the credentials were issued: decides the base address (SPEC §9). */
  readonly credentialsIssuedAt: Date;
  readonly createdAt: Date;
  /** A disabled integration authenticates nowhere. */
  readonly disabled: boolean;
}

/** Integrations. */
export interface ClientStore {
  /** Returns the integration or `null`. Never compares secrets: the router does, in constant time. */
  findClient(clientId: string): Promise<OAuthClient | null>;
  /** Insert or replace by clientId (used for create, rotate-secret and disable). */
  saveClient(client: OAuthClient): Promise<void>;
  /** Every integration, ordered by createdAt then clientId. */
  listClients(): Promise<readonly OAuthClient[]>;
}

/** An authorization code as stored (RFC 6749 §4.1.2): hashed, bound to client, user, redirect_uri and issuer. */
export interface AuthorizationCodeRecord {
  /** base64url SHA-256 of the code. */
  readonly codeHash: string;
  /** Every token issued from this code shares this id; replay revokes it (RFC 6749 §4.1.2). */
  readonly grantId: string;
  readonly clientId: string;
  readonly userId: string;
  readonly redirectUri: string;
  readonly scope: readonly string[];
  /** S256 code challenge (RFC 7636 §4.2) or `null` when the request carried none. */
  readonly codeChallenge: string | null;
  /** The issuer (base address) the code was issued at; it is redeemable only there. */
  readonly issuer: string;
  readonly expiresAt: Date;
}

/**
 * Outcome of `consumeCode`.
 * - `consumed`: this call won; the code is now used.
 * - `replayed`: the code exists, is not expired, and was already used.
 * - `not_found`: unknown or expired.
 */
export type ConsumeResult<T> =
  | { readonly kind: 'consumed'; readonly record: T }
  | { readonly kind: 'replayed'; readonly grantId: string }
  | { readonly kind: 'not_found' };

/** Authorization codes. */
export interface CodeStore {
  saveCode(record: AuthorizationCodeRecord): Promise<void>;
  /**
   * Atomic single use: of N concurrent calls for one code exactly one gets `consumed`; every other call,
   * and every later call until the code expires, gets `replayed`. Expired or unknown: `not_found`.
   */
  consumeCode(codeHash: string): Promise<ConsumeResult<AuthorizationCodeRecord>>;
}

/** An access or refresh token as stored: hashed, grouped by grant. */
export interface TokenRecord {
  /** base64url SHA-256 of the token. */
  readonly tokenHash: string;
  readonly grantId: string;
  readonly clientId: string;
  /** `null` for client_credentials tokens: no user is involved. */
  readonly userId: string | null;
  readonly scope: readonly string[];
  /** The issuer (base address) that issued the token. */
  readonly issuer: string;
  readonly expiresAt: Date;
}

/** Access and refresh tokens. */
export interface TokenStore {
  /**
   * Saves an access token and, when given, a refresh token of the same grant, all or nothing.
   * Returns `false` (and saves nothing) when the grant was revoked: a token issued while a code replay
   * or a revocation races with the issuance must not survive it.
   */
  saveTokens(access: TokenRecord, refresh: TokenRecord | null): Promise<boolean>;
  /** `null` if unknown, expired or revoked. */
  findAccessToken(tokenHash: string): Promise<TokenRecord | null>;
  /** `null` if unknown, expired or revoked. Refresh tokens are reusable until then (SPEC §4.5). */
  findRefreshToken(tokenHash: string): Promise<TokenRecord | null>;
  /** Removes one access token (RFC 7009 §2.1). Idempotent. */
  revokeAccessToken(tokenHash: string): Promise<void>;
  /**
   * Removes every access and refresh token of the grant and remembers the grant as revoked for at least
   * 24 hours, so that `saveTokens` refuses it. Idempotent.
   */
  revokeGrant(grantId: string): Promise<void>;
  /** Removes every token of an integration, or of one user of it (`userId` given). Idempotent. */
  revokeClientTokens(clientId: string, userId?: string): Promise<void>;
}

/** A user's approval of an integration for a set of scopes. */
export interface ConsentRecord {
  readonly userId: string;
  readonly clientId: string;
  readonly scope: readonly string[];
  readonly grantedAt: Date;
}

/** Consents. */
export interface ConsentStore {
  findConsent(userId: string, clientId: string): Promise<ConsentRecord | null>;
  /** Insert or replace by (userId, clientId). */
  saveConsent(record: ConsentRecord): Promise<void>;
  /** Idempotent. */
  revokeConsent(userId: string, clientId: string): Promise<void>;
  /** Every consent of one user, ordered by grantedAt. */
  listConsents(userId: string): Promise<readonly ConsentRecord[]>;
}

/** The JWS algorithms of signing keys (RFC 7518 §3.1, RFC 8037 §3.1). `none` and HS* never appear. */
export type SigningAlgorithm = 'ES256' | 'RS256' | 'EdDSA';

/**
 * A package-generated key that signs JWT access tokens (RFC 9068 §4), kept so that every instance and every
 * restart signs and verifies with the same keys. Records are immutable: rotation inserts a newer one.
 * The newest (by `createdAt`, then `kid`) signs; an older one stays published and verifiable until
 * `accessTokenTtl` (plus a refresh margin) after a newer one took over, so no issued token outlives its key.
 */
export interface SigningKeyRecord {
  /** RFC 7638 JWK thumbprint of the public key: the JWS `kid`. Unique. */
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  /** PKCS#8 PEM of the private key. A secret: keep the store's data as private as the host's. */
  readonly privateKeyPem: string;
  /** When the key was made; the newest key signs. */
  readonly createdAt: Date;
}

/** Options of `saveSigningKey`. */
export interface SaveSigningKeyOptions {
  /**
   * Insert only when the store holds no key at all, atomically: of N instances starting together on an
   * empty store exactly one inserts, so they all converge on one key.
   */
  readonly onlyIfNone?: boolean;
}

/**
 * Signing keys of JWT access tokens (optional part: needed only with `accessTokenFormat: 'jwt'` and no
 * host-supplied `jwt.signingKeys`). @see RFC 9068 §4, RFC 7517 §5 (the JWKS they are published in).
 */
export interface SigningKeyStore {
  /** Every key, ordered by createdAt then kid (oldest first). Empty array when there is none. */
  listSigningKeys(): Promise<readonly SigningKeyRecord[]>;
  /**
   * Inserts a key; never replaces one. Resolves `true` when inserted, `false` when the kid already exists
   * or (with `onlyIfNone`) the store already holds a key.
   */
  saveSigningKey(record: SigningKeyRecord, options?: SaveSigningKeyOptions): Promise<boolean>;
}

/**
 * The whole store, split by concern so that a deployment can mix backends
 * (integrations in PostgreSQL, codes and tokens in Redis).
 *
 * Every method is async and resolves with a record or `null`, never `undefined`. Expiry is part of the
 * contract: a record whose `expiresAt` is past reads as absent. Dates round-trip as `Date`.
 */
export interface Store {
  readonly clients: ClientStore;
  readonly codes: CodeStore;
  readonly tokens: TokenStore;
  readonly consents: ConsentStore;
  /** Optional: package-generated JWT signing keys (RFC 9068). Without it, JWT tokens need host keys. */
  readonly keys?: SigningKeyStore;
  /** Releases connections, timers and file handles. */
  close?(): Promise<void>;
}
