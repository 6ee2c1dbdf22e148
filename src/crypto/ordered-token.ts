// Access tokens, refresh tokens and codes: the issuing millisecond, a dot, then 256 random bits (or, for a rolling upgrade, the random bits alone).
import { createRandomToken } from './random-token.js';
import { timePrefix } from './time-prefix.js';

/**
 * A fresh credential of 55 characters: `timePrefix()` (11 base32hex characters), `.`, then
 * `createRandomToken()` (43 base64url characters, 256 bits of CSPRNG output, all of its guessing resistance).
 * The dot sets it apart from the 43-character values earlier versions issued, which never contain one, so
 * `hashToken` knows which key each has. The prefix tells whoever holds the token when it was issued, as a
 * JWT's `iat` would; it is what puts the token's key, and so each save, on the last leaf of a store's index.
 * @see RFC 6749 §10.10 (at most 2^-128 chance of a guess), RFC 6750 §2.1 (`b64token` allows the dot), RFC 9700 §4.
 */
export function createOrderedToken(): string {
  return `${timePrefix()}.${createRandomToken()}`;
}

/**
 * A fresh access token, refresh token or code: `createOrderedToken()`, or with `ordered` false (the `orderedTokens`
 * option, for a rolling upgrade) `createRandomToken()` alone, the shape versions before ordered tokens issued and look up.
 * @see RFC 6749 §10.10.
 */
export function createCredential(ordered: boolean): string {
  return ordered ? createOrderedToken() : createRandomToken();
}
