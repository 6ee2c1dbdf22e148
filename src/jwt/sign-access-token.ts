// Builds and signs a JWT access token (RFC 9068): JOSE header, claims, JWS compact serialization.
import { randomBytes } from 'node:crypto';
import { encodeJsonSegment } from './base64url.js';
import { jwsSign } from './jws-crypto.js';
import type { SigningKey } from './signing-key.js';

/** What the token says. Times in milliseconds since the epoch. */
export interface AccessTokenContent {
  /** The base address that issued it (main or legacy). */
  readonly issuer: string;
  readonly audience: string;
  readonly clientId: string;
  /** `null` for client_credentials: no resource owner. */
  readonly userId: string | null;
  readonly scope: readonly string[];
  readonly grantId: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/** `typ` of RFC 9068 §2.1; the short form, as §4 lets verifiers accept both it and `application/at+jwt`. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

/**
 * Signs an access token with `key`. Header `{ alg, typ: "at+jwt", kid }`; claims iss, exp, aud, sub,
 * client_id, iat, jti (random), scope (space-separated; omitted for a token without a scope, which the
 * verifier reads as all-access when `allAccessWithoutScopes` is on), plus `gty: "client_credentials"`
 * when no user is involved (sub is then the client_id, §2.2, so `gty` tells the two apart) and the private
 * `grant_id` that ties the token to its grant for revocation bookkeeping.
 * @throws TypeError when `key` has no private part (a verification-only key cannot sign).
 * @see RFC 9068 §2.1 (header), §2.2 (claims), RFC 7515 §7.1 (compact serialization), RFC 7519 §4.1.
 */
export function signAccessToken(key: SigningKey, content: AccessTokenContent): string {
  if (!key.privateKey) throw new TypeError('express-oauth-router: the signing key has no private part');
  const header = { alg: key.algorithm, typ: ACCESS_TOKEN_TYP, kid: key.kid };
  const claims = {
    iss: content.issuer,
    exp: Math.floor(content.expiresAt / 1000),
    aud: content.audience,
    sub: content.userId ?? content.clientId,
    client_id: content.clientId,
    iat: Math.floor(content.issuedAt / 1000),
    jti: randomBytes(16).toString('base64url'),
    ...(content.scope.length > 0 ? { scope: content.scope.join(' ') } : {}),
    ...(content.userId === null ? { gty: 'client_credentials' } : {}),
    grant_id: content.grantId,
  };
  const input = `${encodeJsonSegment(header)}.${encodeJsonSegment(claims)}`;
  const signature = jwsSign(key.algorithm, key.privateKey, Buffer.from(input, 'ascii'));
  return `${input}.${signature.toString('base64url')}`;
}
