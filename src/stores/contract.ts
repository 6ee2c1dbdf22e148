// The storage contract: what every Store (memory, SQLite, PostgreSQL, Redis, or the host's own) must honour.

/**
 * The two flows an integration can be configured for (SPEC §5.5). An `authorization_code` integration may
 * use the `authorization_code` and `refresh_token` grants; a `client_credentials` one only that grant.
 */
export type ClientFlow = 'authorization_code' | 'client_credentials';

/** The grant types the token endpoint serves (SPEC §4.3–4.5, RFC 6749 §4.1.3, §4.4.2, §6). */
export type GrantType = 'authorization_code' | 'client_credentials' | 'refresh_token';

/**
 * How a client authenticates at the token, revocation and introspection endpoints, named as in the IANA
 * "OAuth Token Endpoint Authentication Methods" registry (RFC 7591 §2): the client_id and client_secret in
 * an `Authorization: Basic` header, or as `client_id` and `client_secret` form fields (RFC 6749 §2.3.1).
 */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post';

/**
 * A registered integration (RFC 6749 §2). The secret is never stored: only its SHA-256, base64url.
 */
export interface OAuthClient {
  readonly clientId: string;
  /**
   * The stored form of the client secret, never the secret itself: base64url SHA-256 (`hashSecret`) for
   * generated secrets, or a `$scrypt$…` PHC string or a bcrypt `$2b$…` hash for imported ones (`importClients`).
   * Opaque to stores: `verifyClientSecret` reads the format. At most 197 characters (ours: 43 or 88).
   */
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
  /**
   * The one method this integration may authenticate with (RFC 7591 §2 `token_endpoint_auth_method`).
   * Absent: any method the server allows (`clientAuthMethods`). A store keeps absence as absence: it returns
   * no such property (never `null` or `undefined` as a value). Optional so that stores written for contract
   * v1, which do not know the field, keep working: their integrations accept every method the server allows.
   */
  readonly tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /**
   * The stored form of the secret a planned rotation replaced (`rotateSecret` with a grace period), which
   * keeps authenticating until `previousClientSecretExpiresAt`; the two are present together or not at all.
   * Optional, like `tokenEndpointAuthMethod`: a store written for contract v1 never returns it, and a store
   * keeps absence as absence. @see RFC 6749 §2.3.1, RFC 6819 §5.2.3.7 (secret rotation).
   */
  readonly previousClientSecretHash?: string;
  /** When `previousClientSecretHash` stops authenticating. */
  readonly previousClientSecretExpiresAt?: Date;
}

/** The fields of an integration that `updateClient` can change, each on its own. */
export interface ClientChanges {
  readonly clientSecretHash?: string;
  readonly name?: string;
  readonly redirectUris?: readonly string[];
  readonly allowedScopes?: readonly string[];
  readonly requirePkce?: boolean;
  readonly disabled?: boolean;
  /** A method restricts the integration to it; `null` lifts the restriction (the field is then absent). */
  readonly tokenEndpointAuthMethod?: TokenEndpointAuthMethod | null;
  /** Given together with `previousClientSecretExpiresAt`; `null` for both removes both (the field is absent). */
  readonly previousClientSecretHash?: string | null;
  readonly previousClientSecretExpiresAt?: Date | null;
}

/** What `ClientStore.disableClient` did: disabled an enabled integration, or found it disabled already. */
export type DisableClientOutcome = 'disabled' | 'already_disabled';

/** What `ClientStore.enableClient` did: enabled a disabled integration, or found it enabled already. */
export type EnableClientOutcome = 'enabled' | 'already_enabled';

/**
 * An integration as this process last read it from the store, and which version of the stored record that
 * was (`ClientCopies.find`). `revision` is opaque, compared by the store only; any change to the record, by
 * any writer, gives it another revision (a store may give a record rewritten with exactly the same values the
 * same revision: it is what the copy holds).
 */
export interface ClientCopy {
  readonly client: OAuthClient;
  readonly revision: string;
}

/**
 * Optional part `clientCopies`, outside every tier: integrations as this process last read them, so that a
 * token request can authenticate its client without a lookup. A copy may be stale at any moment; a store that
 * offers this part makes `saveTokens` honour `SaveTokensOptions.clientRevision`, refusing, in the same
 * transaction as the insert, tokens whose integration has changed in any way (or gone) since the copy was
 * read. The router reads copies only where such a refusal can be settled by a lookup (the token endpoint's
 * grants: client_credentials and refresh_token run again; the code exchange judges its checks and its save
 * again) and looks up whatever a copy would refuse, so a change counts from its commit, as it does with a lookup
 * per request, never from when this process hears of it. The part
 * must come from the store that holds the tokens: `combineStores` drops it otherwise.
 * @see RFC 6749 §2.3.1 (client authentication), §3.2.1.
 */
export interface ClientCopies {
  /**
   * Synchronous, no I/O: the integration as `findClient` last read it in this process, or `undefined` when none
   * is kept. An unknown id is never kept, so probing ids fills nothing. The caller reads it, never changes it.
   */
  find(clientId: string): ClientCopy | undefined;
}

/**
 * Integrations. `findClient` is required; the others form the `administration` tier (registering,
 * updating, disabling and listing integrations: the CLI and the programmatic admin API).
 */
export interface ClientStore {
  /** Returns the integration or `null`. Never compares secrets: the router does, in constant time. */
  findClient(clientId: string): Promise<OAuthClient | null>;
  /** Tier `administration`. Inserts a new integration; resolves `false`, changing nothing, if its id exists. */
  createClient?(client: OAuthClient): Promise<boolean>;
  /**
   * Tier `administration`. Applies exactly the fields given, atomically and field by field: two concurrent
   * calls that change different fields (a disable and a secret rotation) both take effect. Never a
   * read-modify-write of the whole record. Resolves the record as it is after the change, or `null` for an
   * unknown id.
   */
  updateClient?(clientId: string, changes: ClientChanges): Promise<OAuthClient | null>;
  /**
   * Optional, in no tier (stores written before it lack it). In one atomic step, sets `disabled` and removes the
   * previous secret of a planned rotation (`updateClient(clientId, { disabled: true, previousClientSecretHash: null,
   * previousClientSecretExpiresAt: null })`), and says what `disabled` was just before: resolves `'disabled'` when
   * this call disabled an enabled integration, `'already_disabled'` when it was disabled already (the previous
   * secret is removed all the same), `null` for an unknown id. Of N concurrent calls on an enabled integration, from
   * any number of instances, exactly one resolves `'disabled'`: the admin API reports `client.disabled` once per
   * disable. Without it, the admin API reads the flag before `updateClient`, and two instances disabling at once may
   * both report it. @see RFC 7009 §2.1, RFC 6749 §2.3.1.
   */
  disableClient?(clientId: string): Promise<DisableClientOutcome | null>;
  /**
   * Optional, in no tier (stores written before it lack it). In one atomic step, clears `disabled` (as
   * `updateClient(clientId, { disabled: false })`) and says what it was just before: resolves `'enabled'` when this
   * call enabled a disabled integration, `'already_enabled'` when it was enabled already, `null` for an unknown id. Of
   * N concurrent calls on a disabled integration, from any number of instances, exactly one resolves `'enabled'`: the
   * admin API reports `client.enabled` once per enable. Without it, the admin API reads the flag before `updateClient`,
   * and two instances enabling at once may both report it. @see RFC 6749 §2.3.1.
   */
  enableClient?(clientId: string): Promise<EnableClientOutcome | null>;
  /** Tier `administration`. Every integration, ordered as `compareClients` (store-policy) orders them. */
  listClients?(): Promise<readonly OAuthClient[]>;
  /**
   * Optional, even in the `administration` tier (stores written for contract v1 lack it; `deleteClient` of
   * the admin API then says so). In one transaction: removes the integration, its codes, consents and
   * tokens. The caller first records a `revokeClientTokens(clientId)` tombstone (the admin API does), so no
   * token request under way can save after it, and an integration later created with the same id revives
   * nothing. Resolves `false` for an unknown id.
   *
   * A store that cannot find codes or consents by integration in that transaction may leave them, inert:
   * a code's tokens are refused by the tombstone (its `issuedAt` precedes it), and the router ignores a
   * consent granted before its integration's `createdAt`, so a consent left by a deleted integration never
   * stands for one re-created with the same id. The Redis store does so (its consents live in each user's
   * hash slot, its codes in their own; on a cluster no script reaches them together): it removes the record
   * and its place in the client list. The conformance suite checks "gone or inert". @see RFC 7009 §2.1.
   */
  deleteClient?(clientId: string): Promise<boolean>;
}

/** An authorization code as stored (RFC 6749 §4.1.2): hashed, bound to client, user, redirect_uri and issuer. */
export interface AuthorizationCodeRecord {
  /**
   * The code's key (`hashToken`): 43 base64url characters, a SHA-256 of the code, led by the code's issuing
   * millisecond for codes of this version, so keys of later codes sort later (an index on it grows at one end).
   */
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
  /**
   * When the request that issued the code began, before it read the consent or the integration: a
   * revocation of the integration's or the user's tokens at or after this moment voids the code too
   * (`SaveTokensOptions.authorizedAt`), so no code issued before a revocation can be redeemed after it.
   */
  readonly issuedAt: Date;
  readonly expiresAt: Date;
}

/**
 * Outcome of `consumeCode`.
 * - `consumed`: this call won; the code is now used.
 * - `replayed`: the code exists, is not expired, and was already used. `userId` and `clientId` (optional: a store
 *   may leave them out) are the code's user and integration, so the revocation the replay causes is reported against
 *   them, also when another integration presented the code.
 * - `not_found`: unknown or expired.
 */
export type ConsumeResult<T> =
  | { readonly kind: 'consumed'; readonly record: T }
  | { readonly kind: 'replayed'; readonly grantId: string; readonly userId?: string; readonly clientId?: string }
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
  /**
   * The token's key (`hashToken`): 43 base64url characters, a SHA-256 of the token, led by the token's
   * issuing millisecond for tokens of this version, so keys of later tokens sort later.
   */
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

/** What `saveTokens` needs to refuse tokens that a revocation has overtaken. */
export interface SaveTokensOptions {
  /**
   * The moment the authority behind these tokens was established, taken before the request read anything
   * it relies on: the token request's start (client_credentials, refresh_token), or for a code exchange the
   * start of the request that issued the code (`AuthorizationCodeRecord.issuedAt`). A `revokeClientTokens`
   * of the integration, or of the user at the integration, recorded at or after it voids the tokens.
   */
  readonly authorizedAt: Date;
  /**
   * The revision of the integration copy the request was authenticated with (`ClientCopies.find`), when it
   * was: the save is then also refused if the stored integration is no longer that revision, or gone. Absent
   * when the integration was looked up for the request. A store without `clientCopies` never receives it.
   */
  readonly clientRevision?: string;
  /**
   * True when the request minted `access.grantId` itself and has shown it to no one (client_credentials): no
   * code, token or revocation can name the grant before this save commits, so nothing can race it. A store may
   * then skip what orders a save against a concurrent `revokeGrant` of its grant (PostgreSQL's grant row). A
   * hint only: the save still refuses a grant already revoked, and `revokeGrant` still removes its tokens.
   * Absent means false.
   */
  readonly newGrant?: boolean;
}

/**
 * Access and refresh tokens. Every method but `revokeClientTokens` is required; `revokeClientTokens` is in
 * the `administration` and `consents` tiers (disabling an integration, rotating its secret, withdrawing a
 * consent).
 *
 * Revocation is exact, not "probably right": every revocation leaves a tombstone, and `saveTokens` checks
 * the tombstones and inserts in one transaction (or one script), so a save racing a revocation is either
 * wholly before it (and removed by it) or wholly after it (and refused). Tombstones are kept for
 * `STORE_POLICY.revocationRetentionMs`.
 */
export interface TokenStore {
  /**
   * Saves an access token and, when given, a refresh token of the same grant, all or nothing. Resolves
   * `false`, saving nothing, when at the moment of the insert, and atomically with it:
   * - the grant is revoked (`revokeGrant`, or a `revokeClientTokens` that removed a refresh token of it);
   * - the integration's tokens were revoked (`revokeClientTokens(clientId)`) at or after `authorizedAt`;
   * - the user's tokens at the integration were revoked (`revokeClientTokens(clientId, userId)`) at or after
   *   `authorizedAt` (tokens with a `userId` only);
   * - `clientRevision` is given and the integration's stored record is no longer that revision (or is gone).
   */
  saveTokens(access: TokenRecord, refresh: TokenRecord | null, options: SaveTokensOptions): Promise<boolean>;
  /** `null` if unknown, expired or revoked. */
  findAccessToken(tokenHash: string): Promise<TokenRecord | null>;
  /** `null` if unknown, expired or revoked. Refresh tokens are reusable until then (SPEC §4.5). */
  findRefreshToken(tokenHash: string): Promise<TokenRecord | null>;
  /**
   * Removes one access token (RFC 7009 §2.1); given a refresh token's hash it changes nothing. Idempotent.
   * May resolve `false` when this call removed nothing (the token was gone already, e.g. a concurrent revocation
   * of it won), so that the revocation is reported once (`token.revoked`); `true` or nothing reports it.
   */
  revokeAccessToken(tokenHash: string): Promise<boolean | void>;
  /**
   * In one transaction: removes every access and refresh token of the grant and records the grant as
   * revoked, so that `saveTokens` refuses it from then on. Idempotent.
   * May resolve `false` when the grant was already recorded as revoked before this call (two replays of one code,
   * two revocations of one refresh token), so that the revocation is reported once (`token.revoked`); `true` or
   * nothing reports it. Decided in the same transaction as the record, so of concurrent calls exactly one is first.
   */
  revokeGrant(grantId: string): Promise<boolean | void>;
  /**
   * Tiers `administration` and `consents`. As one transaction would: removes every token of the integration, or
   * of one user at it (`userId` given); records as revoked every grant of which it removed a refresh token (a
   * refresh already under way must not mint a token from it); and records the moment of the call, by the
   * store process's `Date.now()` (the clock `authorizedAt` comes from), so that `saveTokens` refuses tokens
   * authorized at or before it. Idempotent. One transaction is the simple way; a store may instead record the moment
   * first and delete in steps, as the SQLite and Redis stores do for large integrations, if from that first step on
   * no lookup finds a token saved before the moment and no refresh of such a grant saves, whatever becomes of the
   * process, and the call resolves once the steps are done.
   */
  revokeClientTokens?(clientId: string, userId?: string): Promise<void>;
}

/** A user's approval of an integration for a set of scopes. */
export interface ConsentRecord {
  readonly userId: string;
  readonly clientId: string;
  readonly scope: readonly string[];
  readonly grantedAt: Date;
}

/**
 * Consents: with `TokenStore.revokeClientTokens`, the `consents` tier. Needed for remembered consent
 * (`rememberConsent`) and the connected-applications page (`consentsPage`).
 */
export interface ConsentStore {
  findConsent(userId: string, clientId: string): Promise<ConsentRecord | null>;
  /** Insert or replace by (userId, clientId). */
  saveConsent(record: ConsentRecord): Promise<void>;
  /** Idempotent. */
  revokeConsent(userId: string, clientId: string): Promise<void>;
  /** Every consent of one user, ordered as `compareConsents` (store-policy) orders them. */
  listConsents(userId: string): Promise<readonly ConsentRecord[]>;
}

/** The JWS algorithms of signing keys (RFC 7518 §3.1, RFC 8037 §3.1). `none` and HS* never appear. */
export type SigningAlgorithm = 'ES256' | 'RS256' | 'EdDSA';

/**
 * A package-generated key that signs JWT access tokens (RFC 9068 §4), kept so that every instance and every
 * restart signs and verifies with the same keys. Records are immutable: rotation inserts a newer one.
 * Every live key is published; the newest (by `createdAt`, then `kid`) signs once it has been published for three
 * minutes (a store's first key at once); an older one stays published and verifiable until `accessTokenTtl` (plus
 * a refresh margin) after a newer one took over, so no issued token outlives its key.
 */
export interface SigningKeyRecord {
  /** RFC 7638 JWK thumbprint of the public key: the JWS `kid`. Unique. */
  readonly kid: string;
  readonly algorithm: SigningAlgorithm;
  /** PKCS#8 PEM of the private key. A secret: keep the store's data as private as the host's. */
  readonly privateKeyPem: string;
  /** When the key was made: the newest key signs, three minutes after it (src/jwt/store-key-ring.ts). */
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
 * Signing keys of JWT access tokens: the `signingKeys` tier, needed only with `accessTokenFormat: 'jwt'`
 * and no host-supplied `jwt.signingKeys`. @see RFC 9068 §4, RFC 7517 §5 (the JWKS they are published in).
 */
export interface SigningKeyStore {
  /** Every key, ordered as `compareSigningKeys` (store-policy) orders them, oldest first. May be empty. */
  listSigningKeys(): Promise<readonly SigningKeyRecord[]>;
  /**
   * Inserts a key; never replaces one. Resolves `true` when inserted, `false` when the kid already exists
   * or (with `onlyIfNone`) the store already holds a key.
   */
  saveSigningKey(record: SigningKeyRecord, options?: SaveSigningKeyOptions): Promise<boolean>;
  /**
   * Optional (no tier requires it): deletes the key of `kid`, exactly as written. Resolves `true` when a record was
   * deleted, `false` when none had that kid (deleted before, by this call's retry or another instance). With it,
   * `rotateSigningKey({ leaked: true })` takes a key out at once, and every instance deletes the records of the keys
   * it has retired, so a retired key's private part does not stay in the store, and a later, longer `accessTokenTtl`
   * cannot bring it back. Without it, both leave the records where they are (the README says how to delete by hand).
   * @see RFC 9068 §4, RFC 7517 §5.
   */
  deleteSigningKey?(kid: string): Promise<boolean>;
  /**
   * Optional, in no tier (stores written before it lack it). In one atomic step (one transaction or script): inserts
   * `record`, unless its kid is stored already (a retry of a call whose answer was lost: nothing is replaced), and
   * deletes every other key, whoever saved it and whenever; resolves the kids it deleted, in any order. Every key goes,
   * not only the ones the caller listed: of N concurrent calls, from any number of instances, the last to commit
   * deletes the keys of those before it, so exactly one key is left and each other kid is resolved by exactly one
   * call (a caller's list could not see a key saved after it listed, and it stayed beside the new one). A store that
   * fails the call leaves everything or nothing, never a new key beside a leaked one: `rotateSigningKey({ leaked:
   * true })` and `oauth-admin keys replace-leaked` use it when present. Without it they save, then delete each key in
   * turn, and a store failing between the two leaves the leaked keys signing on every other instance until the
   * replacement is run again. @see RFC 9068 §4, RFC 9700 §4.10, §4.14.
   */
  replaceSigningKeys?(record: SigningKeyRecord): Promise<readonly string[]>;
}

/** One fixed window of a counter: hits counted so far, and when the window ends. */
export interface RateLimitCount {
  /** Hits in the window, this one included (for `hit`). At least 0. */
  readonly count: number;
  /** When the window ends: from then on the key counts from zero again. */
  readonly resetAt: Date;
}

/**
 * Fixed-window counters for the sign-in and client-authentication limits: the `rateLimits` tier. With it,
 * every instance sharing the store counts together; without it each process counts on its own.
 *
 * Keys are at most 200 printable ASCII characters and never hold a secret or raw user input (the router MACs
 * usernames, client ids and addresses into them under the instances' shared secret, or hashes them when there is
 * none), so a store may use them verbatim as row keys.
 * `now` is the caller's clock: a window has ended when `now` is at or after its `resetAt`, so every store
 * judges windows alike and tests can step the clock. A store expires keys on its own some time after
 * `resetAt` (a TTL, a sweep): that is housekeeping, never what decides whether a window has ended.
 * @see RFC 6819 §4.3.5, §4.4.3.6, §5.1.4.2.3 (online guessing; locking), RFC 6585 §4 (429 Too Many Requests).
 */
export interface RateLimitStore {
  /**
   * Atomically, in one statement or script: when the key is absent or its window has ended at `now`, starts a
   * window of `windowMs` (count 1, resetAt `now + windowMs`); otherwise adds one and keeps its resetAt. Of N
   * concurrent hits on one key, across processes too, each count from 1 to N is resolved exactly once.
   */
  hit(key: string, windowMs: number, now: Date): Promise<RateLimitCount>;
  /** The key's window, without counting; `null` when absent or ended at `now`. */
  get(key: string, now: Date): Promise<RateLimitCount | null>;
  /**
   * Takes back one hit of the window that ends at `resetAt` (an attempt that turned out not to count),
   * atomically; never below zero, and nothing when that window has since been replaced. A window released to
   * zero may be dropped (`get` then answers `null`), since the next hit counts 1 either way.
   */
  release(key: string, resetAt: Date): Promise<void>;
  /** Forgets the key. Idempotent. */
  reset(key: string): Promise<void>;
}

/**
 * What a `RevocationFeed` answers: an opaque mark, compared only for equality, or `null` when the feed
 * cannot vouch for anything (its connection is down, it is not subscribed yet, it is unsure).
 */
export type RevocationMark = number | string | null;

/**
 * The `revocationFeed` tier: tells, synchronously and at near-zero cost, whether any token could have been
 * revoked since an earlier moment, so that `requireBearer` may serve a token it verified from its own
 * in-process cache without trusting a stale one.
 *
 * `mark()` returns a value that changes whenever a token may have been revoked or removed anywhere the store
 * reaches (by this process, another instance, the CLI): `revokeAccessToken`, `revokeGrant`,
 * `revokeClientTokens`, and any write by another connection the store cannot tell apart from those. A
 * cached token verified by a lookup that began after `mark()` returned `m` stays valid only while `mark()`
 * still returns `m`; so a feed that is down, reconnecting or unsure returns `null` (never equal to anything),
 * and the caller falls back to store lookups, never to trusting its cache. The mark moves when the revocation's
 * deletion commits, or after it, never before: a lookup between a move and the delete would find the token and
 * cache it under the new mark, which nothing moves again. A feed may change its mark more
 * often than needed (every commit by another process, say): that costs cache misses, never exactness.
 *
 * How each engine keeps it: the memory store bumps a counter in every revocation; SQLite pairs a counter
 * bumped by its own connection's revocations with `PRAGMA data_version`, which changes when any other
 * connection commits; the PostgreSQL store counts the `LISTEN` notifications each revocation's transaction
 * sends, plus its own revocations (`null` while its listening connection is down or unheard); the Redis store
 * counts the messages its revocation scripts PUBLISH, plus its own revocations (`null` while its subscriber
 * is down or unheard). The latter two stop a
 * cached token within the notification latency; the first two within one request.
 * @see RFC 7009 §2.1 (a revoked token is refused from then on), RFC 6750 §3.1 (`invalid_token`).
 */
export interface RevocationFeed {
  /** The current mark; synchronous, no I/O beyond a local read. `null`: unsure, do not trust a cache. */
  mark(): RevocationMark;
}

/** The tiers of the Store contract (see `Store`). */
export type StoreTier = 'required' | 'administration' | 'consents' | 'signingKeys' | 'rateLimits' | 'revocationFeed';

/**
 * The whole store, split by concern so that a deployment can mix backends (integrations in PostgreSQL,
 * codes and tokens in Redis), and by tier, as express-session's Store is:
 * - **required**: `clients.findClient`, `codes.*`, and every `tokens` method but `revokeClientTokens`:
 *   what the authorization and token endpoints, revocation, introspection and `requireBearer` need;
 * - **administration**: `clients.createClient`, `updateClient`, `listClients` and
 *   `tokens.revokeClientTokens`: registering, updating, disabling, rotating and listing integrations;
 * - **consents**: `consents.*` and `tokens.revokeClientTokens`: remembered consent and its withdrawal;
 * - **signingKeys**: `keys.*`: package-generated JWT signing keys (RFC 9068);
 * - **rateLimits**: `rateLimits.*`: counters of failed sign-ins and client authentications shared by every
 *   instance on the store (without it, each process counts alone);
 * - **revocationFeed**: `revocations.mark`: lets `requireBearer` cache verified opaque tokens in process,
 *   exactly (see `RevocationFeed`); without it every request is looked up in the store;
 * - **optional**: `close`, `clientCopies.find` (integration copies whose revision `saveTokens` checks), and
 *   `backendTime` (the tokens server's clock, which `oauth-admin` checks its own against).
 * `createOAuthRouter` checks the tiers its enabled features need and names every missing method.
 *
 * Every method but `revocations.mark` and `clientCopies.find` (both synchronous) is async and resolves with a record or
 * `null`, never `undefined`. Expiry is part of the
 * contract: a record whose `expiresAt` is past reads as absent. Dates round-trip as `Date`, to the
 * millisecond. Ids (client ids, user ids, grant ids, hashes, kids) are compared exactly: ids that differ
 * only in case or by a trailing space are different records (no case-insensitive or space-padding
 * collation). A failing backend (unreachable, timed out, locked) rejects with `StoreUnavailableError`, so
 * the router answers 503 `temporarily_unavailable` and never a 500.
 */
export interface Store {
  readonly clients: ClientStore;
  readonly codes: CodeStore;
  readonly tokens: TokenStore;
  /** Tier `consents`. */
  readonly consents?: ConsentStore;
  /** Tier `signingKeys`. Without it, JWT access tokens need host-supplied keys. */
  readonly keys?: SigningKeyStore;
  /** Tier `rateLimits`. Without it, the sign-in and client-authentication limits count per process. */
  readonly rateLimits?: RateLimitStore;
  /** Tier `revocationFeed`: the tokens part's revocation feed. Without it, `requireBearer` looks up every token. */
  readonly revocations?: RevocationFeed;
  /** Optional, in no tier: integration copies whose revision `saveTokens` checks. Without it, every token request looks its client up. */
  readonly clientCopies?: ClientCopies;
  /**
   * Optional, in no tier: what readiness asks besides its probe read. Rejects (`StoreUnavailableError`) when the
   * store cannot serve though reads still answer: the SQLite store's file removed or replaced under it (whose reads
   * reach the old file), or its `-wal` removed, while every write is refused until a restart opens the file at the path again; or its writes
   * failing with an I/O error or a read-only file, until one goes through.
   */
  checkReady?(): Promise<void>;
  /**
   * Optional, in no tier: the time now by the clock of the server that keeps the tokens (PostgreSQL's
   * `clock_timestamp()`, Redis's `TIME`), read by one round trip. A revocation's moment (`revokeClientTokens`) is
   * the calling process's `Date.now()`, and the instances compare it with theirs, which are assumed in step with
   * that server (NTP); `oauth-admin`, which may run on another machine, compares its own clock with this one
   * before any change and refuses to run when they are more than a second apart, since a moment from a clock S
   * ahead refuses the integration's new tokens for S. A store whose backend is in the caller's process or on
   * its machine (memory, SQLite) has none. Rejects with `StoreUnavailableError` when the server cannot be reached.
   * @see RFC 7009 §2.1 (a revocation counts from then on).
   */
  backendTime?(): Promise<Date>;
  /** Optional: releases connections, timers and file handles. */
  close?(): Promise<void>;
}

/** The `administration` tier's integrations: every method, `deleteClient` (contract v1), `disableClient` and `enableClient` still optional. */
export type AdministrationClientStore = Required<Omit<ClientStore, 'deleteClient' | 'disableClient' | 'enableClient'>>
  & Pick<ClientStore, 'deleteClient' | 'disableClient' | 'enableClient'>;

/** A Store with the `administration` tier. */
export interface AdministrationStore extends Store {
  readonly clients: AdministrationClientStore;
  readonly tokens: Required<TokenStore>;
}

/** A Store with the `consents` tier. */
export interface ConsentsStore extends Store {
  readonly consents: ConsentStore;
  readonly tokens: Required<TokenStore>;
}

/**
 * A Store with every tier but the revocation feed, as each built-in store is (each also has `deleteClient`). The feed
 * stays optional (`revocations?`): a store offers it only where it can vouch for it (the Redis store on a host's
 * cluster client, whose node addresses it does not know, has none); a custom store's own type may require it.
 */
export interface CompleteStore extends Store {
  readonly clients: AdministrationClientStore;
  readonly tokens: Required<TokenStore>;
  readonly consents: ConsentStore;
  readonly keys: SigningKeyStore;
  readonly rateLimits: RateLimitStore;
}
