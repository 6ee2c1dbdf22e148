// requireBearer(): protects the host's API routes with the access tokens this server issued (RFC 6750).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { RevocationMark, Store } from '../stores/contract.js';
import type { ResolvedOptions } from '../options.js';
import type { BearerAuth, RequireBearerOptions } from '../types.js';
import { hashToken } from '../crypto/hash-token.js';
import { sendHostRouteJson } from '../http/json-response.js';
import { bearerChallenge } from '../http/www-authenticate.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { logStoreAvailable, storeOutageOf } from '../http/store-outage-log.js';
import { oauthErrorBody, toErrorBody } from '../errors.js';
import { singleAuthorizationHeader } from '../http/authorization-header.js';
import { isScopeToken } from '../checks/scope.js';
import { looksLikeJws } from '../jwt/verify-access-token.js';
import type { KeyRing } from '../jwt/key-ring.js';
import { hasJwsSegments, tokenKeyVerifies } from '../jwt/token-key-verifies.js';
import { tokenKeyRetired } from '../jwt/token-key-retired.js';
import { heldScope, isAllAccess, isKnownScope } from '../checks/grant-scope.js';
import { OptionsError } from '../options-error.js';
import { createBearerCache, type BearerCache } from './bearer-cache.js';
import { describeStoreError } from '../stores/describe-store-error.js';
import { setRequestAuth } from '../http/request-auth.js';
import { bearerCheckChannel, reportErrorAnswer, type BearerCheckMessage } from '../metrics/channels.js';
import type { OAuthEvents } from '../events/oauth-events.js';
import { answerTurn } from '../http/answer-turn.js';
import { toDictionaryProperties } from '../http/dictionary-properties.js';

/**
 * Verifies a JWT access token locally (RFC 9068 §4); `null` when it is not valid. `cached`, when present,
 * answers synchronously for a token verified before (`null` once expired), `undefined` for any other.
 */
export type JwtVerifier = ((token: string) => Promise<BearerAuth | null>) & {
  readonly cached?: (token: string) => BearerAuth | null | undefined;
  /** True when `token`, a JWT that verified before, was signed with a key that no longer verifies (retired, deleted). */
  readonly keyRetired?: (token: string) => boolean;
};

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
const ANY_BEARER = /^Bearer(\s|$)/i;

/** Sends the refusal and reports it; `missing_token` stands for RFC 6750 §3.1's "no error code" answer. */
function reject(source: OAuthEvents, res: Response, status: number, challenge: string | null, body: Record<string, string>): void {
  reportErrorAnswer(source, 'bearer', body.error ?? 'missing_token', status);
  // A host's request timeout may have answered while the token was looked up: nothing more can be said on it.
  if (res.headersSent) return;
  sendHostRouteJson(res, status, body, challenge ? [['WWW-Authenticate', challenge]] : undefined);
}

/**
 * Builds the `requireBearer(opts)` factory. The token comes only from the `Authorization` header: tokens in
 * the query string are ignored (RFC 9700 §2.4 / RFC 6750 §2.3 "SHOULD NOT be used").
 * - no credentials → 401, `WWW-Authenticate: Bearer realm="…"` with no error code (RFC 6750 §3.1);
 * - malformed header, or two Authorization headers → 400 `invalid_request`;
 * - unknown, expired or revoked token, or one another router (issuer) on the same store issued → 401 `invalid_token`;
 * - missing scope → 403 `insufficient_scope` with the required `scope` (an all-access token lacks none); a scope the
 *   server no longer knows (dropped from a non-empty `scopes` option since the token was issued) is missing, and
 *   `req.auth.scope` leaves it out; a token left with no scope it knows → 401 `invalid_token` (`heldScope`);
 * - store outage → 503 `temporarily_unavailable`.
 * On success `req.auth` tells the handler who the token is for.
 * A required scope the server does not know (outside a non-empty `scopes` option) is refused when `requireBearer` is
 * called, with an `OptionsError`, as a malformed one is with a `TypeError`: no scoped token could hold it.
 * With `verifyJwt` (accessTokenFormat 'jwt'), a token of JWS compact shape is verified by signature and
 * claims, with no store round trip (so a revoked JWT stays usable until it expires, unless
 * `jwt.checkRevocation` also requires its record, through the same cache as opaque tokens); any other token
 * (e.g. opaque ones issued before the switch) is still looked up in the store.
 * With `tokenKeys` instead (accessTokenFormat 'opaque': `createVerifyingKeyRing`), a JWT issued before the switch back
 * is honoured by its record only while its signing key still verifies: one replaced as leaked since is refused, cached
 * or not (`tokenKeyVerifies`, `tokenKeyRetired`). An opaque token is never asked about (no dots to find, no store read).
 * With a store that has a revocation feed (`store.revocations`) and `bearerCache` on, opaque tokens already
 * verified are served from an in-process cache while the feed's mark has not moved since their lookup, so a
 * revocation through any path is refused on the very next request (`bearer-cache.ts`). Without a feed,
 * every request is looked up.
 * While someone subscribes to the `express-oauth-router:bearer-check` diagnostics channel, each decision is
 * timed (up to the host's handler being called, or the refusal sent) and reported; refusals are reported on
 * `express-oauth-router:error` either way.
 * @see RFC 6750 §2.1, §3, §3.1, RFC 9068 §4.
 */
export function createRequireBearer(store: Store, options: ResolvedOptions, verifyJwt: JwtVerifier | null = null, tokenKeys: KeyRing | null = null) {
  const realm = options.realm;
  const missing = bearerChallenge(realm);
  const checkJwtRevocation = options.jwt.checkRevocation;
  const source = options.events;
  // Its store's outage log (the router's own, not the process's): whether a token found ends an outage.
  const storeOutage = storeOutageOf(options);
  // A token is this router's only if one of its own base addresses issued it, as the JWT verifier checks `iss`: another
  // router on the same store (a tenant of its own) saves its tokens there too, and they are not for this one's API.
  const ownIssuers = new Set([options.main.issuer, ...(options.legacy ? [options.legacy.issuer] : [])]);
  // A token the bearer cache holds by its record is asked about its key again (a leaked key's replacement leaves the
  // record): a JWT under jwt.checkRevocation, as the verifier refuses it; one an opaque router honours, by `tokenKeys`.
  const keyRetired: ((token: string) => boolean) | undefined = verifyJwt
    ? (checkJwtRevocation ? verifyJwt.keyRetired : undefined)
    : (tokenKeys !== null ? (token) => tokenKeyRetired(tokenKeys, token) : undefined);
  // JWTs checked by signature alone are answered from the verifier's memory when it has one.
  const remembered = verifyJwt && !checkJwtRevocation ? verifyJwt.cached : undefined;
  // One cache per router, shared by every requireBearer(): a token is verified once whatever scope a route needs.
  // A feed whose mark() throws is a bug of its store: every token is looked up, and the log says so once a minute.
  let faultLoggedAt = -Infinity;
  const onFeedFault = (error: unknown): void => {
    // The monotonic clock: a wall clock stepped back (NTP) would silence the line for as long as the step.
    const now = performance.now();
    if (now - faultLoggedAt < 60_000) return;
    faultLoggedAt = now;
    const { message, code } = describeStoreError(error);
    options.logger.error(`express-oauth-router: store.revocations.mark() threw (${message}${code ? `, ${code}` : ''}); every bearer token is looked up in the store until it answers`);
  };
  const cache: BearerCache | null = store.revocations && typeof store.revocations.mark === 'function' && options.bearerCacheSize > 0
    ? createBearerCache(store.revocations, options.bearerCacheSize, onFeedFault)
    : null;

  /**
   * The token's auth from the store (RFC 6750 §3.1: unknown, expired or revoked → null), after a cache miss.
   * `verifyFirst` (a JWT under `jwt.checkRevocation`) must pass before the store is asked; a cache hit skips
   * it, since only a token that passed it and was found in the store is ever cached.
   */
  async function lookUp(token: string, tokenHash: string, mark: RevocationMark, verifyFirst?: JwtVerifier): Promise<BearerAuth | null> {
    if (verifyFirst && !(await verifyFirst(token))) return null;
    const record = await store.tokens.findAccessToken(tokenHash);
    // The store answered: the end of an outage logged before is said (README, `logger` option).
    if (storeOutage.pending) logStoreAvailable(options);
    if (!record || record.expiresAt.getTime() <= Date.now() || !ownIssuers.has(record.issuer)) return null;
    // A JWT an opaque router honours by its record: only while its key verifies. Asked once the record is found, so
    // only a token we issued can make the keys be read for an unknown kid: junk kids, of no record, would otherwise
    // spend the few-seconds allowance of such reads, and a genuine JWT of another instance's new key (a leaked key's
    // replacement, which signs at once) was refused here meanwhile. The shape test first: an opaque token pays no
    // promise for it.
    if (tokenKeys !== null && hasJwsSegments(token) && !(await tokenKeyVerifies(tokenKeys, token))) return null;
    // A scope dropped from the `scopes` option since the token was issued is not held; a token left with none is
    // refused. Decided before the cache, so a hit (the hot path) pays nothing for it.
    const scope = heldScope(record.scope, options);
    if (scope === null) return null;
    const auth: BearerAuth = {
      clientId: record.clientId,
      userId: record.userId,
      scope,
      allAccess: isAllAccess(record.scope, options),
      grantId: record.grantId,
      issuer: record.issuer,
      expiresAt: record.expiresAt,
    };
    cache?.put(tokenHash, auth, mark);
    return auth;
  }

  return function requireBearer(bearerOptions: RequireBearerOptions = {}): RequestHandler {
    const required = typeof bearerOptions.scope === 'string'
      ? bearerOptions.scope.split(' ').filter(Boolean)
      : [...(bearerOptions.scope ?? [])];
    // A malformed scope is the same start-up mistake as an unknown one, so it is the same error (a host catching
    // OptionsError around its route setup, or telling it from its own TypeErrors, meets both).
    const malformed = required.find((scope) => !isScopeToken(scope));
    if (malformed !== undefined) {
      throw new OptionsError('requireBearer.scope', `names ${JSON.stringify(malformed)}, which is not a valid scope-token (RFC 6749 §3.3)`);
    }
    // A scope outside a non-empty vocabulary is granted to nobody (grantableScopes), so the route would admit no scoped
    // token, only all-access ones: a typo the host would otherwise meet in production, where its integrations are
    // scoped, after tests with a SPEC integration passed. Refused here, when the host mounts its routes.
    const unknown = required.find((scope) => !isKnownScope(scope, options));
    if (unknown !== undefined) {
      throw new OptionsError('requireBearer.scope', `names ${JSON.stringify(unknown)}, which is not a key of the scopes option `
        + `(${Object.keys(options.scopes).join(', ')}): no token limited to scopes could ever reach the route`);
    }
    const scopeText = required.join(' ');

    /** Answers 401 `invalid_token`, or 403 when the scope falls short; otherwise admits the request. */
    function decide(auth: BearerAuth | null, req: Request, res: Response, next: NextFunction): void {
      if (!auth) {
        const description = 'the access token is invalid, expired or revoked';
        reject(source, res, 401, bearerChallenge(realm, { error: 'invalid_token', description }), oauthErrorBody('invalid_token', description));
        return;
      }
      if (!auth.allAccess && required.some((scope) => !auth.scope.includes(scope))) {
        const description = `the access token lacks the required scope: ${scopeText}`;
        reject(source, res, 403, bearerChallenge(realm, { error: 'insufficient_scope', description, scope: scopeText }), oauthErrorBody('insufficient_scope', description));
        return;
      }
      setRequestAuth(req, auth);
      // The answer is this token's: no shared cache may keep it (RFC 9111 §3.5), yet nginx's proxy_cache ignores
      // Authorization and stores it under `proxy_cache_valid`, for the next caller with no token. The host's own
      // Cache-Control, set before the check or by its handler after, wins. An answer a host's request timeout already
      // sent while the token was looked up takes no header: setting one threw from the middleware's promise, which
      // Express 4 leaves unhandled.
      if (!res.headersSent && !res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'no-store');
      next();
    }

    /** After a cache miss: verify (JWT) or look up, then decide; a store outage answers its RFC error. */
    async function verify(token: string, tokenHash: string, mark: RevocationMark, req: Request, res: Response, next: NextFunction): Promise<void> {
      let auth: BearerAuth | null;
      try {
        if (verifyJwt && looksLikeJws(token)) {
          auth = checkJwtRevocation ? await lookUp(token, tokenHash, mark, verifyJwt) : await verifyJwt(token);
        } else {
          auth = await lookUp(token, tokenHash, mark);
        }
      } catch (err) {
        const oauthError = toOAuthError(err, options);
        reject(source, res, oauthError.status, null, toErrorBody(oauthError));
        return;
      }
      decide(auth, req, res, next);
    }

    /**
     * Set by a check decided from memory (the bearer cache, or the JWT verifier's memory of tokens it verified),
     * read right after the synchronous part of that check: what the bearer-check channel reports as a hit.
     */
    let fromMemory = false;

    /**
     * The check itself: calls `next()` when the token is good, otherwise answers the refusal. A token served
     * from the cache is decided synchronously; anything else returns the promise of its verification.
     */
    function check(req: Request, res: Response, next: NextFunction): Promise<void> | undefined {
      let header: string | undefined;
      try {
        header = singleAuthorizationHeader(req);
      } catch (err) {
        const description = (err as Error).message;
        reject(source, res, 400, bearerChallenge(realm, { error: 'invalid_request', description }), oauthErrorBody('invalid_request', description));
        return undefined;
      }
      // A JWT verified before, sent as SPEC sends it ("Bearer " and the token): found before the syntax check,
      // which scans the whole token (~8k instructions for a 600-character JWT). Only a token that verified is
      // ever found, and it passes that check, so the answer is the one the check would lead to.
      let asked: string | undefined;
      if (remembered !== undefined && header !== undefined && header.startsWith('Bearer ')) {
        asked = header.slice(7);
        const known = remembered(asked);
        if (known !== undefined) {
          fromMemory = true;
          decide(known, req, res, next);
          return undefined;
        }
      }
      // A well-formed credential, the usual case, is matched once; a header that is not one is then told apart:
      // no Bearer credential at all (401 without an error code) or a malformed one (400).
      const match = header === undefined ? null : BEARER.exec(header);
      if (!match) {
        if (header === undefined || !ANY_BEARER.test(header)) {
          // RFC 6750 §3.1: a request without credentials gets no error code "or other error information".
          reject(source, res, 401, missing, {});
          return undefined;
        }
        const description = 'the Authorization header is not a valid Bearer credential';
        reject(source, res, 400, bearerChallenge(realm, { error: 'invalid_request', description }), oauthErrorBody('invalid_request', description));
        return undefined;
      }
      const token = match[1]!;
      if (verifyJwt && !checkJwtRevocation) {
        // Checked by signature alone: not the bearer cache (no record decides) but the verifier's own memory,
        // which holds only tokens it verified, so a hit needs no shape test (a scan of a few hundred characters).
        // Asked once: a token it was already asked for above (the header's usual spelling) is not asked again,
        // so an opaque token still in use after the switch to JWTs pays one lookup, not two.
        const known = token === asked ? undefined : remembered?.(token);
        if (known !== undefined) {
          fromMemory = true;
          decide(known, req, res, next);
          return undefined;
        }
        if (looksLikeJws(token)) return verify(token, '', null, req, res, next);
      }
      const tokenHash = hashToken(token);
      // The mark is taken before the lookup that may follow: an answer is cached only if it still holds after.
      const mark = cache ? cache.mark() : null;
      const cached = cache?.get(tokenHash, mark, Date.now());
      // A JWT cached by its record (under jwt.checkRevocation, or honoured by an opaque router), which a key's deletion
      // (a leaked key replaced) or retirement leaves in place: its key is asked again, so it is refused as a lookup would.
      if (cached && keyRetired?.(token) !== true) {
        fromMemory = true;
        decide(cached, req, res, next);
        return undefined;
      }
      return verify(token, tokenHash, mark, req, res, next);
    }

    /** The check proper, once the request's turn on its connection has come (`answerTurn`). */
    function checkInTurn(req: Request, res: Response, next: NextFunction): Promise<void> | undefined {
      // Before the first property the request gets from here on: the check's, the host's handler's, Node's.
      toDictionaryProperties(req);
      toDictionaryProperties(res);
      if (!bearerCheckChannel.hasSubscribers) return check(req, res, next);
      const timedFrom = performance.now();
      // Known once the check's synchronous part has run: a promise means a lookup or a signature verification.
      let cache: BearerCheckMessage['cache'] = null;
      const publish = (outcome: BearerCheckMessage['outcome']): void => {
        bearerCheckChannel.publish({ source, outcome, seconds: (performance.now() - timedFrom) / 1000, cache } satisfies BearerCheckMessage);
      };
      let passed = false;
      const done = (): void => {
        if (!passed) publish('error');
      };
      fromMemory = false;
      let decidedNow = true;
      const pending = check(req, res, () => {
        passed = true;
        // A host's handler called within the check's synchronous part (a hit) publishes before `pending` is known.
        if (decidedNow) cache = fromMemory ? 'hit' : null;
        publish('success');
        next();
      });
      decidedNow = false;
      if (pending === undefined) {
        cache = fromMemory ? 'hit' : null;
        done();
        return undefined;
      }
      cache = 'miss';
      return pending.then(done);
    }

    return function requireBearerToken(req: Request, res: Response, next: NextFunction): Promise<void> | undefined {
      // Pipelined behind a request not yet answered on its connection (a revocation, say): checked after it, so the
      // token is judged as that request left it, and not at all if that answer closed the connection.
      const turn = answerTurn(req, res);
      if (turn !== true) return turn.then((open) => (open ? checkInTurn(req, res, next) : undefined));
      return checkInTurn(req, res, next);
    };
  };
}
