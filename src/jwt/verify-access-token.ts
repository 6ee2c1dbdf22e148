// Verifies a JWT access token locally (RFC 9068 §4): signature by a published key, then header and claims.
import type { BearerAuth } from '../types.js';
import type { ResolvedOptions } from '../options.js';
import type { KeyRing } from './key-ring.js';
import { decodeJsonObjectSegment, decodeSegment } from './base64url.js';
import { jwsVerify } from './jws-crypto.js';
import { LATEST_EXPIRY_MS } from '../grants/latest-expiry.js';
import { heldScope } from '../checks/grant-scope.js';

/** Three base64url segments: what a JWS compact token looks like; our opaque tokens have one dot at most (ordered-token.ts). */
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/**
 * Tolerance for iat/nbf ahead of our clock: a minute, the skew between instances that the signing-key rotation
 * budgets for (README, "JWT access tokens"). Only our own keys sign, so a token "from the future" is one from an
 * instance whose clock is ahead; at 5 s, an instance 30 s ahead had its tokens refused by the others for 25 s. None
 * for exp: an expired token must fail like an opaque one.
 */
const CLOCK_SKEW_SECONDS = 60;
/**
 * Tokens already verified, by their exact text: a client reuses one token for many calls, and a map lookup
 * costs well under a microsecond where an ES256 verification costs ~100 µs (DESIGN §3a). Identical text means
 * an identical signature, so the answer cannot differ, except for expiry, which is checked on every hit.
 * Entries are found by the signature segment and then compared whole: a map key is hashed over its full
 * length on every lookup, and hashing the ~600 characters of a whole token was a quarter of what a JWT-guarded
 * request cost over an unguarded one (callgrind), where comparing two equal strings is a memory compare.
 */
const VERIFIED_CACHE_SIZE = 5_000;

/**
 * Whether a bearer token has the JWS compact shape (and so is verified without the store).
 * @see RFC 7515 §7.1.
 */
export function looksLikeJws(token: string): boolean {
  return JWS_COMPACT.test(token);
}

function isString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** 9999-12-31T23:59:59Z: the last second a NumericDate can name that every Date, store and client can hold. */
const LAST_NUMERIC_DATE = LATEST_EXPIRY_MS / 1000;

/**
 * A NumericDate as this package signs it: whole seconds from 0 to the year 9999. `exp: 1e20` or `1.5` is no
 * token of ours, and a Date made from it would be Invalid Date in `req.auth.expiresAt`.
 * @see RFC 7519 §2 (NumericDate), §4.1.4, §4.1.6.
 */
function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= LAST_NUMERIC_DATE;
}

/**
 * Builds the verifier requireBearer uses when `accessTokenFormat` is 'jwt'. Resolves who the token is for,
 * or `null` for any failure (the caller answers 401 invalid_token and says no more). It asks the store
 * nothing except, rarely, for keys: so revocation of a JWT access token takes effect only at its expiry.
 * Checks, in order: shape; header `typ` at+jwt, `kid` of a published key, `alg` equal to that key's
 * algorithm (so never `none` or HS*), no `crit`; the signature; `iss` one of our issuers; `aud` containing
 * the audience; `exp` in the future; `iat`/`nbf` not in the future, and before `exp` (whole seconds within the
 * range of a Date); client_id, sub, grant_id and jti present, and sub the client_id when gty says client_credentials. No
 * `scope` claim means a token without a scope, all-access as for opaque tokens (`allAccessWithoutScopes`); a scope the
 * server no longer knows is left out, and a token left with none is refused (`heldScope`).
 * @throws only what the key ring throws when the store is unreachable (the caller answers 503).
 * @see RFC 9068 §4, RFC 7515 §5.2, RFC 7519 §7.2, RFC 8725 §3.1–3.2, §3.11.
 */
export function createAccessTokenVerifier(keys: KeyRing, options: ResolvedOptions) {
  const issuers = new Set([options.main.issuer, ...(options.legacy ? [options.legacy.issuer] : [])]);
  const audience = options.jwt.audience;
  /** Signature segment → the whole token verified and its auth. */
  const verified = new Map<string, { readonly token: string; readonly kid: string; readonly auth: BearerAuth }>();

  /** Each request gets its own copy (frozen scope, fresh Date), so a handler that mutates req.auth changes no other request. */
  function copy(auth: BearerAuth): BearerAuth {
    return { ...auth, expiresAt: new Date(auth.expiresAt.getTime()) };
  }

  function remember(token: string, signaturePart: string, kid: string, auth: BearerAuth): BearerAuth {
    // Map keeps insertion order: dropping the first entry drops the oldest.
    if (verified.size >= VERIFIED_CACHE_SIZE && !verified.has(signaturePart)) verified.delete(verified.keys().next().value!);
    verified.set(signaturePart, { token, kid, auth: { ...auth, scope: Object.freeze([...auth.scope]) } });
    return copy(auth);
  }

  /**
   * A token verified before: its auth (`null` once expired, or once its key retired); `undefined` when it has not
   * been verified. Any string may be asked (requireBearer asks before its syntax check): only one equal to a token that verified,
   * and so of JWS compact shape, is ever found.
   */
  function cached(token: string): BearerAuth | null | undefined {
    const signaturePart = token.slice(token.lastIndexOf('.') + 1);
    const entry = verified.get(signaturePart);
    if (!entry || entry.token !== token) return undefined;
    // A key retires once the tokens signed under the lifetime in force have expired; a token signed under a longer
    // one (accessTokenTtl lowered since) was still served from here after its key retired, where an instance that had
    // not verified it before refused it.
    if (entry.auth.expiresAt.getTime() > Date.now() && keys.stillVerifies(entry.kid)) return copy(entry.auth);
    verified.delete(signaturePart);
    return null;
  }

  /**
   * Whether `token`, which verified before (requireBearer's cache holds it under `jwt.checkRevocation`), was signed
   * with a key that no longer verifies here: retired, or deleted as leaked (`rotateSigningKey({ leaked: true })`).
   * Its kid comes from this memory, or, once the token has left it, from its header. An opaque token is no JWT: its
   * part before the dot (a time prefix, ordered-token.ts), if any, decodes as no JSON header.
   */
  function keyRetired(token: string): boolean {
    const entry = verified.get(token.slice(token.lastIndexOf('.') + 1));
    if (entry && entry.token === token) return !keys.stillVerifies(entry.kid);
    const dot = token.indexOf('.');
    if (dot <= 0) return false;
    const header = decodeJsonObjectSegment(token.slice(0, dot));
    return header !== null && isString(header.kid) && !keys.stillVerifies(header.kid);
  }

  async function verifyAccessToken(token: string): Promise<BearerAuth | null> {
    const known = cached(token);
    if (known !== undefined) return known;
    if (!looksLikeJws(token)) return null;
    const [headerPart, payloadPart, signaturePart] = token.split('.') as [string, string, string];
    const header = decodeJsonObjectSegment(headerPart);
    if (!header || header.crit !== undefined) return null;
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : '';
    if (typ !== 'at+jwt' && typ !== 'application/at+jwt') return null;
    if (!isString(header.kid) || !isString(header.alg)) return null;
    const key = await keys.findKey(header.kid);
    if (!key || header.alg !== key.algorithm) return null;
    const signature = decodeSegment(signaturePart);
    if (!signature || !jwsVerify(key.algorithm, key.publicKey, Buffer.from(`${headerPart}.${payloadPart}`, 'ascii'), signature)) return null;

    const claims = decodeJsonObjectSegment(payloadPart);
    if (!claims) return null;
    const { iss, aud, exp, iat, nbf, sub, client_id: clientId, grant_id: grantId, scope, gty, jti } = claims;
    if (!isString(iss) || !issuers.has(iss)) return null;
    if (!(aud === audience || (Array.isArray(aud) && aud.includes(audience)))) return null;
    const now = Date.now() / 1000;
    if (!isTime(exp) || exp <= now) return null;
    if (!isTime(iat) || iat > now + CLOCK_SKEW_SECONDS || iat >= exp) return null;
    if (nbf !== undefined && (!isTime(nbf) || nbf > now + CLOCK_SKEW_SECONDS)) return null;
    // RFC 9068 §2.2: jti is REQUIRED; a client_credentials token's subject is its client (as signed).
    if (!isString(sub) || !isString(clientId) || !isString(grantId) || !isString(jti)) return null;
    if (gty === 'client_credentials' && sub !== clientId) return null;
    if (scope !== undefined && typeof scope !== 'string') return null;
    if (gty !== undefined && gty !== 'client_credentials') return null;
    // A scope dropped from the `scopes` option since the token was signed is not held; a token left with none is
    // refused. Decided before the token is remembered, so a later check of it pays nothing for it.
    const held = heldScope(typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [], options);
    if (held === null) return null;
    return remember(token, signaturePart, key.kid, {
      clientId,
      userId: gty === 'client_credentials' ? null : sub,
      scope: held,
      // Tokens without a scope are signed without the claim; a present claim, even empty, limits the token.
      allAccess: scope === undefined && options.allAccessWithoutScopes,
      grantId,
      issuer: iss,
      expiresAt: new Date(exp * 1000),
    });
  }

  // `cached` lets requireBearer decide a token verified before without a promise; `keyRetired` checks one its cache holds.
  return Object.assign(verifyAccessToken, { cached, keyRetired });
}
