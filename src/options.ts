// Router options: their types, defaults and start-up validation (bad options throw here, never later).
import type { SessionStoreLike } from './http/session-store-like.js';
import { contrastWithWhite } from './views/contrast-with-white.js';
import { OptionsError, onlyKnownKeys } from './options-error.js';
import { resolveLoginRateLimit, type LoginRateLimitOptions, type ResolvedLoginRateLimit } from './http/login-rate-limit.js';
import {
  resolveClientAuthRateLimit, type ClientAuthRateLimitOptions, type ResolvedClientAuthRateLimit,
} from './checks/client-auth-rate-limit.js';
import { resolveJwtOptions, type JwtOptions, type ResolvedJwtOptions } from './jwt/resolve-jwt-options.js';
import { resolveClientAuthMethods } from './checks/client-auth-methods.js';
import type { TokenEndpointAuthMethod } from './stores/contract.js';
import { resolveBearerCacheSize, type BearerCacheOption } from './middleware/bearer-cache.js';
import { OAuthEvents } from './events/oauth-events.js';
import { resolvePageLanguages, type PageLanguagesOptions, type ResolvedPageLanguages } from './views/page-languages.js';

export type { JwtOptions, ResolvedJwtOptions } from './jwt/resolve-jwt-options.js';

/** Options of `createOAuthRouter`. Times are in seconds. */
export interface OAuthRouterOptions {
  /**
   * The base address {auth_url} (SPEC §4), e.g. `https://auth.example.com`. Its path is where the
   * endpoints are served: `${issuer}/oauth2/authorize`, `${issuer}/oauth2/token`.
   */
  readonly issuer: string;
  /**
   * The legacy base address {legacy_auth_url} (SPEC §9). Integrations whose credentials were issued before
   * `credentialsIssuedBefore` are served only there; all others only at `issuer`. `false` disables it.
   */
  readonly legacy?: LegacyOptions | false;
  /** Access token lifetime (RFC 6749 §4.2.2 `expires_in`). Default 3600. */
  readonly accessTokenTtl?: number;
  /** Refresh token lifetime. Default 30 days (2592000). */
  readonly refreshTokenTtl?: number;
  /** Authorization code lifetime; at most 600 (RFC 6749 §4.1.2: "maximum … of 10 minutes"). Default 60. */
  readonly authorizationCodeTtl?: number;
  /** Require an S256 code_challenge of every authorization request (RFC 7636, RFC 9700 §2.1.1). */
  readonly requirePkce?: boolean;
  /** `realm` of the `WWW-Authenticate` challenges (RFC 6750 §3, RFC 7617 §2). Default: the main issuer, for both issuers and `requireBearer`. */
  readonly realm?: string;
  /** Login and consent session (express-session). Ignored when the host app already set `req.session`. */
  readonly session?: SessionOptions;
  /** Product name shown on the login and consent pages. Default "Signature API". */
  readonly productName?: string;
  /** Where operational messages go. Default: `console`. Never receives secrets, codes or tokens. */
  readonly logger?: Logger;
  /**
   * The scopes this server knows, each with the plain-words sentence the consent page shows
   * (e.g. `{ 'envelopes:read': 'Read your envelopes' }`). Published as `scopes_supported` (RFC 8414 §2). When not
   * empty it is the vocabulary: no other scope is granted, whatever an integration was registered with, and `oauth.admin`
   * refuses to register one (`UnknownScopeError`, RFC 7591 §3.2.2). Empty: no vocabulary, registered scopes are the limit.
   */
  readonly scopes?: Readonly<Record<string, string>>;
  /**
   * What a token without a scope means. `true` (default): all-access, accepted by `requireBearer({ scope })`
   * for any scope, so an integration registered without scopes (every SPEC integration: SPEC §2 has none)
   * can call every route; it may still ask for a scope of `scopes` and then gets a token limited to it.
   * `false`: such a token passes only `requireBearer()` without a scope requirement, and an integration
   * without scopes cannot ask for one: for deployments that want every integration scoped. Registering is
   * the same either way.
   * @see RFC 6749 §3.3, RFC 6750 §3.1 (insufficient_scope).
   */
  readonly allAccessWithoutScopes?: boolean;
  /** Accent colour of the login and consent pages, `#rrggbb`. Default `#1f4fd1`. */
  readonly brandColor?: string;
  /** Skip the consent page when the user already approved this integration for these scopes. Default true. */
  readonly rememberConsent?: boolean;
  /**
   * Serve the connected-applications page (`/oauth2/consents`), where a user withdraws consent. Default true.
   * With `rememberConsent`, it needs the store's `consents` tier; set both to false for a store without it.
   */
  readonly consentsPage?: boolean;
  /**
   * client_ids (typically resource servers) allowed to introspect any token (RFC 7662 §2.1). Every other
   * client may introspect only its own tokens; for others' tokens it gets `{"active":false}`.
   */
  readonly introspectionClients?: readonly string[];
  /**
   * Issue access tokens, refresh tokens and codes that lead with their millisecond of issue (default true), keyed by
   * it in the store. `false` issues them as versions before it did (43 characters, keyed by their plain SHA-256), so
   * instances of such a version, running beside this one during a rolling upgrade, find and revoke what this one
   * issues; turn it back on once every instance runs this version. Tokens of either shape are accepted either way.
   */
  readonly orderedTokens?: boolean;
  /**
   * Failed sign-ins allowed per window before the login form answers 429 (OWASP Authentication Cheat Sheet;
   * RFC 6819 §4.4.3.6 "online guessing"): `max` per account from one source (10), `maxPerSource` across
   * accounts (30), `maxPerAccount` from all sources (100; past the last two only sources where the user
   * signed in before, within `knownSourceDays`, may still try), `windowSeconds` 900. Counted in the Store's
   * `rateLimits` tier (shared by every instance) or per process; `store` takes an express-rate-limit Store
   * for the failure counters instead. `false` turns it off. A source is `req.ip`: behind a proxy, set
   * Express's `trust proxy`.
   */
  readonly loginRateLimit?: LoginRateLimitOptions | false;
  /**
   * Failed client authentications at the token, revocation and introspection endpoints allowed per window
   * before the source gets 429 `temporarily_unavailable` with `Retry-After`: `max` per client_id from one
   * source (20), `maxPerSource` (100), `windowSeconds` 300. Only failures count and never across sources, so
   * a stranger cannot lock an integration out (RFC 6819 §4.3.5). `false` turns it off.
   */
  readonly clientAuthRateLimit?: ClientAuthRateLimitOptions | false;
  /**
   * The secret the two limits' counter keys are MACed under (HMAC-SHA-256, key derived by HKDF), so the usernames and
   * addresses they count cannot be read back from the store or its APM spans with a dictionary. At least 16
   * characters, the same on every instance (they count together only under one secret). Default: the first
   * `session.secret`. Set it when there is none (`session.hostSession`, or a host login page without a router
   * session); with no secret at all the keys are an unkeyed SHA-256, and NODE_ENV=production warns at start-up.
   * Changing it (or the first `session.secret` it defaults to) starts every counter afresh, once.
   * `undefined` counts as absent. @see RFC 6819 §5.1.4.2.3.
   */
  readonly rateLimitKeySecret?: string | undefined;
  /**
   * `'opaque'` (default): random access tokens that requireBearer looks up in the store. `'jwt'`: signed
   * JWT access tokens (RFC 9068) that requireBearer verifies without the store, so revoking one takes effect
   * only at its expiry; introspection and refresh still honour revocation.
   */
  readonly accessTokenFormat?: 'opaque' | 'jwt';
  /** JWT access token settings (RFC 9068), used when `accessTokenFormat` is `'jwt'`. */
  readonly jwt?: JwtOptions;
  /**
   * How clients may authenticate at the token, revocation and introspection endpoints (RFC 6749 §2.3.1):
   * `'client_secret_basic'` (the `Authorization: Basic` header of SPEC §5.1) and `'client_secret_post'`
   * (`client_id` and `client_secret` form fields). Default both; list one to refuse the other with 401
   * `invalid_client`. Published in the metadata as `token_endpoint_auth_methods_supported` and its
   * revocation and introspection twins (RFC 8414 §2). An integration can be narrowed further on its own
   * (`tokenEndpointAuthMethod`, RFC 7591 §2).
   */
  readonly clientAuthMethods?: readonly TokenEndpointAuthMethod[];
  /**
   * Seconds a request body may take to arrive once the router starts reading it (token, revocation and
   * introspection requests, and the login, consent and withdraw forms): a body that stops half-way is answered
   * 408 and its connection closed, instead of holding it for Node's `server.requestTimeout` (5 minutes).
   * Default 10, at most 300. Bodies a host parser read before the router are under the host's own limits.
   */
  readonly bodyTimeout?: number;
  /**
   * Seconds the router waits for an answer from `userAuth.verifyCredentials`, `currentUser` or `findUser`: a hook
   * that has not answered by then counts as an outage (503 `temporarily_unavailable`, logged as one), so a hung user
   * directory holds no sign-in, authorization or token request. Default 10, at most 300.
   * @see RFC 6749 §4.1.2.1, §5.2.
   */
  readonly userAuthTimeout?: number;
  /**
   * `requireBearer`'s in-process cache of verified opaque access tokens, used only with a store that has a
   * revocation feed (`store.revocations`: the built-in memory, SQLite, PostgreSQL and Redis stores): a cached token
   * is served only while the feed says nothing was revoked since it was verified, so a revocation from any path is
   * honoured on the very next request (from another PostgreSQL or Redis instance, once its notification arrives). `false` looks every token up in the store; `{ maxEntries }` bounds
   * it (default 10,000, oldest out first). Default true. @see RFC 6750 §3.1, RFC 7009 §2.1.
   */
  readonly bearerCache?: BearerCacheOption;
  /**
   * Where audit events go (token issued, revoked, login failed, …; see `OAuthEvent`). Pass one emitter to
   * the router and to `createOAuthAdmin` to hear both on one; default: a new one, returned as
   * `oauth.events`. @see RFC 9700 §4.14.
   */
  readonly events?: OAuthEvents;
  /**
   * Translations of the login, consent, connected-applications, error and sign-out pages: `catalogues` by language
   * tag (each a `PageCatalogue`, any messages of `PageMessages`; English fills in the rest), and an optional
   * `choose(req, available)` that picks the language itself (a profile setting, a cookie). Otherwise each page is
   * written in the best of the browser's Accept-Language among `en` and the catalogues, with `<html lang>`, `dir`
   * (right to left for Arabic, Hebrew, Persian, Urdu, …), `Content-Language` and `Vary: Accept-Language`. Values in a
   * message (names, counts) are put in by the router, escaped and isolated as in English: a translation is text, never
   * HTML. Default: the pages in English only. The JSON endpoints are not affected.
   * @example pageLanguages: { catalogues: { de: { signInTitle: 'Anmelden', signInButton: 'Anmelden' } } }
   * @see RFC 9110 §12.5.4 (Accept-Language), §8.5 (Content-Language), WCAG 2.2 §3.1.1.
   */
  readonly pageLanguages?: PageLanguagesOptions;
}

/** The legacy base address of SPEC §9. */
export interface LegacyOptions {
  /** {legacy_auth_url}, e.g. `https://legacy-auth.example.com` or `https://auth.example.com/legacy`. */
  readonly issuer: string;
  /** Credentials issued strictly before this instant use the legacy address. Default `2021-01-15`. */
  readonly credentialsIssuedBefore?: string | Date;
}

/** Session settings for the login and consent pages. */
export interface SessionOptions {
  /** Cookie-signing secret(s). When absent a random one is made per process (sessions then do not survive a
   * restart nor span instances), with a warning. `undefined` counts as absent, so `process.env.SESSION_SECRET`
   * can be given as it is under `exactOptionalPropertyTypes`. */
  readonly secret?: string | readonly string[] | undefined;
  /**
   * Any express-session store. Default: a MemorySessionStore (one process; bounded, expired sessions swept).
   * Under NODE_ENV=production, express-session's own MemoryStore is refused: it never sweeps.
   */
  readonly store?: SessionStoreLike;
  /** Cookie name. Default `oauth.sid`; `__Host-` prefixed on an https issuer unless it already starts with `__`. */
  readonly cookieName?: string;
  /**
   * Idle lifetime of a sign-in through the router's login page: unused this long, the user signs in again.
   * Default 1800 (30 minutes). (OWASP Session Management: idle and absolute timeouts.)
   */
  readonly idleTtl?: number;
  /** Absolute lifetime of such a sign-in, however active: default 28800 (8 hours); at least `idleTtl`. */
  readonly absoluteTtl?: number;
  /** Former name of `idleTtl`, still accepted. */
  readonly ttl?: number;
  /**
   * `true`: your app's express-session, mounted before the router, holds the router's sign-ins, and the router mounts
   * no session of its own, so it needs no `secret` or `store` (giving one is an OptionsError), and NODE_ENV=production
   * does not ask for them (it checks, at the first request, that your store is not express-session's MemoryStore).
   * `cookieName` then names only the router's own page cookies (`<cookieName>.csrf`, …). A request that reaches the router without `req.session` is then a
   * mounting mistake: a 500 page, logged once. Default `false`: the router uses the host's session when a request
   * has one, and mounts its own otherwise.
   */
  readonly hostSession?: boolean;
}

/** Session settings after defaults (seconds): `oauth.options.session`. @see RFC 6819 §4.4.1.4 (session lifetime). */
export interface ResolvedSessionOptions extends SessionOptions {
  readonly idleTtl: number;
  readonly absoluteTtl: number;
}

/** A minimal logger. */
export interface Logger {
  warn(message: string): void;
  error(message: string): void;
}

/** One base address, resolved. */
export interface ResolvedIssuer {
  /** The issuer string exactly as configured, without a trailing slash. */
  readonly issuer: string;
  /** `https:` or `http:` origin host, e.g. `auth.example.com:8443`. */
  readonly host: string;
  /** Path prefix of the endpoints, '' for the root. */
  readonly pathPrefix: string;
  readonly secure: boolean;
  readonly legacy: boolean;
}

/** Options after defaults and validation. */
export interface ResolvedOptions {
  readonly main: ResolvedIssuer;
  readonly legacy: ResolvedIssuer | null;
  readonly legacyCutoff: Date;
  readonly accessTokenTtl: number;
  readonly refreshTokenTtl: number;
  readonly authorizationCodeTtl: number;
  readonly requirePkce: boolean;
  readonly realm: string;
  readonly session: ResolvedSessionOptions;
  readonly productName: string;
  readonly logger: Logger;
  readonly scopes: Readonly<Record<string, string>>;
  readonly allAccessWithoutScopes: boolean;
  readonly brandColor: string;
  readonly rememberConsent: boolean;
  readonly consentsPage: boolean;
  readonly introspectionClients: ReadonlySet<string>;
  readonly orderedTokens: boolean;
  readonly loginRateLimit: ResolvedLoginRateLimit | null;
  readonly clientAuthRateLimit: ResolvedClientAuthRateLimit | null;
  /** As given; `rateLimitKeySecretOf` picks the secret the counter keys are MACed under. */
  readonly rateLimitKeySecret: string | undefined;
  readonly accessTokenFormat: 'opaque' | 'jwt';
  readonly jwt: ResolvedJwtOptions;
  /** Never empty, in the order the metadata lists them. */
  readonly clientAuthMethods: readonly TokenEndpointAuthMethod[];
  /** Seconds. */
  readonly bodyTimeout: number;
  /** Seconds. */
  readonly userAuthTimeout: number;
  /** Most entries of requireBearer's cache; 0: off. */
  readonly bearerCacheSize: number;
  /** Audit events; its listener errors go to `logger`. */
  readonly events: OAuthEvents;
  /** `null`: the pages in English, with no Content-Language or Vary. */
  readonly pageLanguages: ResolvedPageLanguages | null;
}

const KNOWN_KEYS = new Set([
  'issuer', 'legacy', 'accessTokenTtl', 'refreshTokenTtl', 'authorizationCodeTtl', 'requirePkce', 'realm',
  'session', 'productName', 'logger', 'scopes', 'allAccessWithoutScopes', 'brandColor', 'rememberConsent', 'consentsPage', 'introspectionClients', 'orderedTokens', 'loginRateLimit', 'clientAuthRateLimit', 'rateLimitKeySecret',
  'accessTokenFormat', 'jwt', 'clientAuthMethods', 'bodyTimeout', 'userAuthTimeout', 'bearerCache', 'events', 'pageLanguages',
]);
const LIKELY_TYPOS: Record<string, string> = {
  accessTokenTTL: 'accessTokenTtl', refreshTokenTTL: 'refreshTokenTtl', codeTtl: 'authorizationCodeTtl',
  authorizationCodeTTL: 'authorizationCodeTtl', pkce: 'requirePkce', issuerUrl: 'issuer', authUrl: 'issuer',
  tokenEndpointAuthMethods: 'clientAuthMethods', clientAuthenticationMethods: 'clientAuthMethods',
  languages: 'pageLanguages', locales: 'pageLanguages', i18n: 'pageLanguages', translations: 'pageLanguages',
};

export { OptionsError };

function resolveIssuer(key: string, value: unknown, legacy: boolean): ResolvedIssuer {
  if (typeof value !== 'string') throw new OptionsError(key, 'must be a URL string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OptionsError(key, `must be an absolute URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OptionsError(key, 'must be http(s)');
  if (url.search || url.hash) throw new OptionsError(key, 'must not have a query or fragment (RFC 8414 §2)');
  const pathPrefix = url.pathname.replace(/\/+$/, '');
  // `https://auth.example.com//auth` (a base URL with a trailing slash joined to a path): the router's paths, which it
  // sends as relative redirects (a sign-in's 303 to the authorization request, `//auth/oauth2/authorize?…`), would
  // name another host, `auth`, to every browser (RFC 3986 §4.2: a network-path reference).
  if (pathPrefix.startsWith('//')) {
    throw new OptionsError(key, `must not have a path starting with "//" (got ${JSON.stringify(url.pathname)}): a redirect to it names another host`);
  }
  return {
    issuer: `${url.origin}${pathPrefix}`,
    host: url.host,
    pathPrefix,
    secure: url.protocol === 'https:',
    legacy,
  };
}

/** The longest lifetime an option takes: past it an expiry may fall outside what a Date or a store column holds
 * (a token minted with `accessTokenTtl: 1e13` was refused by every check). Ten years. */
const LONGEST_TTL = 10 * 365 * 24 * 3600;

function positiveInteger(key: string, value: unknown, fallback: number, max = LONGEST_TTL): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > max) {
    throw new OptionsError(key, `must be a positive integer number of seconds${max < 1e9 ? ` up to ${max}` : ''}`);
  }
  return value;
}

function resolveCutoff(value: unknown): Date {
  if (value === undefined) return new Date('2021-01-15T00:00:00Z');
  const date = typeof value === 'string' ? new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value)
    : value instanceof Date ? value : null;
  if (!date || Number.isNaN(date.getTime())) {
    throw new OptionsError('legacy.credentialsIssuedBefore', 'must be a date (YYYY-MM-DD or ISO 8601)');
  }
  return date;
}

/**
 * Applies defaults and validates every option once, at start-up.
 * @throws OptionsError naming the bad key.
 */
export function resolveOptions(options: OAuthRouterOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    // The likeliest cause is a call with two arguments, from plain JavaScript, where the types would have said so.
    throw new OptionsError('options', "must be an object, the third argument: createOAuthRouter(store, userAuth, { issuer: 'https://…' })");
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) {
      const hint = LIKELY_TYPOS[key];
      throw new OptionsError(key, hint ? `is not an option; did you mean "${hint}"?` : 'is not an option');
    }
  }
  const main = resolveIssuer('issuer', options.issuer, false);
  let legacy: ResolvedIssuer | null = null;
  let legacyCutoff = resolveCutoff(undefined);
  if (options.legacy !== undefined && options.legacy !== false) {
    if (typeof options.legacy !== 'object' || options.legacy === null) {
      throw new OptionsError('legacy', 'must be { issuer, credentialsIssuedBefore? } or false');
    }
    onlyKnownKeys('legacy', options.legacy, ['issuer', 'credentialsIssuedBefore']);
    legacy = resolveIssuer('legacy.issuer', options.legacy.issuer, true);
    legacyCutoff = resolveCutoff(options.legacy.credentialsIssuedBefore);
    if (legacy.issuer === main.issuer) throw new OptionsError('legacy.issuer', 'must differ from "issuer"');
  }
  if (options.requirePkce !== undefined && typeof options.requirePkce !== 'boolean') {
    throw new OptionsError('requirePkce', 'must be a boolean');
  }
  for (const key of ['realm', 'productName'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value.length === 0 || /["\\\r\n]/.test(value))) {
      throw new OptionsError(key, 'must be a non-empty string without quotes, backslashes or line breaks');
    }
  }
  const session = options.session ?? {};
  if (typeof session !== 'object' || session === null) throw new OptionsError('session', 'must be an object');
  onlyKnownKeys('session', session, ['secret', 'store', 'cookieName', 'idleTtl', 'absoluteTtl', 'ttl', 'hostSession']);
  if (session.hostSession !== undefined && typeof session.hostSession !== 'boolean') throw new OptionsError('session.hostSession', 'must be a boolean');
  if (session.hostSession === true) {
    for (const key of ['secret', 'store'] as const) {
      if (session[key] !== undefined) {
        throw new OptionsError(`session.${key}`, "configures the router's own session, which session.hostSession: true does not mount: set it on your express-session");
      }
    }
  }
  if (session.secret !== undefined) {
    const secrets = typeof session.secret === 'string' ? [session.secret] : session.secret;
    if (!Array.isArray(secrets) || secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length < 16)) {
      throw new OptionsError('session.secret', 'must be a string (or list of strings) of at least 16 characters');
    }
  }
  if (session.ttl !== undefined && session.idleTtl !== undefined) throw new OptionsError('session.ttl', 'is the former name of session.idleTtl: set only idleTtl');
  const idleTtl = positiveInteger(session.ttl !== undefined ? 'session.ttl' : 'session.idleTtl', session.idleTtl ?? session.ttl, 1800);
  const absoluteTtl = positiveInteger('session.absoluteTtl', session.absoluteTtl, Math.max(28800, idleTtl));
  if (absoluteTtl < idleTtl) throw new OptionsError('session.absoluteTtl', 'must be at least session.idleTtl');
  const logger = options.logger ?? console;
  if (typeof logger.warn !== 'function' || typeof logger.error !== 'function') {
    throw new OptionsError('logger', 'must have warn() and error() methods');
  }
  const scopes = options.scopes ?? {};
  if (typeof scopes !== 'object' || scopes === null || Array.isArray(scopes)) {
    throw new OptionsError('scopes', 'must be an object of scope → description');
  }
  for (const [scope, description] of Object.entries(scopes)) {
    if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) throw new OptionsError(`scopes.${scope}`, 'is not a valid scope-token (RFC 6749 §3.3)');
    if (typeof description !== 'string') throw new OptionsError(`scopes.${scope}`, 'must be a description string');
  }
  if (options.allAccessWithoutScopes !== undefined && typeof options.allAccessWithoutScopes !== 'boolean') {
    throw new OptionsError('allAccessWithoutScopes', 'must be a boolean');
  }
  if (options.brandColor !== undefined && (typeof options.brandColor !== 'string' || !/^#[0-9a-fA-F]{6}$/.test(options.brandColor))) {
    throw new OptionsError('brandColor', 'must be a #rrggbb colour');
  }
  // The pages write white on it (Sign in, Allow) and it on white (Deny, the focus ring): unreadable below 4.5:1.
  const contrast = options.brandColor === undefined ? Infinity : contrastWithWhite(options.brandColor);
  if (contrast < 4.5) {
    throw new OptionsError('brandColor', `has a contrast of ${contrast.toFixed(2)}:1 with white, and the pages' buttons `
      + 'need 4.5:1 (WCAG 1.4.3): choose a darker colour');
  }
  if (options.rememberConsent !== undefined && typeof options.rememberConsent !== 'boolean') {
    throw new OptionsError('rememberConsent', 'must be a boolean');
  }
  if (options.consentsPage !== undefined && typeof options.consentsPage !== 'boolean') {
    throw new OptionsError('consentsPage', 'must be a boolean');
  }
  if (options.orderedTokens !== undefined && typeof options.orderedTokens !== 'boolean') {
    throw new OptionsError('orderedTokens', 'must be a boolean');
  }
  const introspectionClients = options.introspectionClients ?? [];
  if (!Array.isArray(introspectionClients) || introspectionClients.some((id) => typeof id !== 'string')) {
    throw new OptionsError('introspectionClients', 'must be a list of client_id strings');
  }
  if (options.accessTokenFormat !== undefined && options.accessTokenFormat !== 'opaque' && options.accessTokenFormat !== 'jwt') {
    throw new OptionsError('accessTokenFormat', 'must be "opaque" or "jwt"');
  }
  if (options.rateLimitKeySecret !== undefined && (typeof options.rateLimitKeySecret !== 'string' || options.rateLimitKeySecret.length < 16)) {
    throw new OptionsError('rateLimitKeySecret', 'must be a string of at least 16 characters, the same on every instance');
  }
  if (options.events !== undefined && !(options.events instanceof OAuthEvents)) {
    throw new OptionsError('events', 'must be an OAuthEvents (new OAuthEvents())');
  }
  const events = options.events ?? new OAuthEvents();
  events.reportErrorsTo(logger);
  const jwt = resolveJwtOptions(options.jwt, main.issuer, (key, problem) => {
    throw new OptionsError(key, problem);
  });
  return {
    main,
    legacy,
    legacyCutoff,
    accessTokenTtl: positiveInteger('accessTokenTtl', options.accessTokenTtl, 3600),
    refreshTokenTtl: positiveInteger('refreshTokenTtl', options.refreshTokenTtl, 30 * 24 * 3600),
    authorizationCodeTtl: positiveInteger('authorizationCodeTtl', options.authorizationCodeTtl, 60, 600),
    requirePkce: options.requirePkce ?? false,
    realm: options.realm ?? main.issuer,
    session: { ...session, idleTtl, absoluteTtl },
    productName: options.productName ?? 'Signature API',
    logger,
    scopes,
    allAccessWithoutScopes: options.allAccessWithoutScopes ?? true,
    brandColor: options.brandColor ?? '#1f4fd1',
    rememberConsent: options.rememberConsent ?? true,
    consentsPage: options.consentsPage ?? true,
    introspectionClients: new Set(introspectionClients),
    orderedTokens: options.orderedTokens ?? true,
    loginRateLimit: resolveLoginRateLimit(options.loginRateLimit),
    clientAuthRateLimit: resolveClientAuthRateLimit(options.clientAuthRateLimit),
    rateLimitKeySecret: options.rateLimitKeySecret,
    accessTokenFormat: options.accessTokenFormat ?? 'opaque',
    jwt,
    clientAuthMethods: resolveClientAuthMethods(options.clientAuthMethods),
    bodyTimeout: positiveInteger('bodyTimeout', options.bodyTimeout, 10, 300),
    userAuthTimeout: positiveInteger('userAuthTimeout', options.userAuthTimeout, 10, 300),
    events,
    pageLanguages: resolvePageLanguages(options.pageLanguages, Object.keys(scopes)),
    bearerCacheSize: resolveBearerCacheSize(options.bearerCache, (problem) => {
      throw new OptionsError('bearerCache', problem);
    }),
  };
}
