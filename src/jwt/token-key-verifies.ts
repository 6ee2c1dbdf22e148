// Whether a presented JWT's signing key still verifies here: an opaque router honours a JWT's record only then.
import type { KeyRing } from './key-ring.js';
import { decodeJsonObjectSegment } from './base64url.js';

/**
 * Whether `token` has at least three dot-separated segments, as a JWS compact token does: an opaque token has no dot
 * or one (a time prefix, ordered-token.ts), so it is told apart by two character searches and no decoding.
 * @see RFC 7515 §7.1.
 */
export function hasJwsSegments(token: string): boolean {
  const first = token.indexOf('.');
  return first >= 0 && token.indexOf('.', first + 1) >= 0;
}

/** The `kid` of a token of JWS compact shape, or null when its header has none readable. @see RFC 7515 §4.1.4. */
export function headerKid(token: string): string | null {
  const header = decodeJsonObjectSegment(token.slice(0, token.indexOf('.')));
  return header !== null && typeof header.kid === 'string' && header.kid.length > 0 ? header.kid : null;
}

/**
 * Whether the key named by `token`'s `kid` still verifies with `keys` (`findKey`: answered from the keys loaded; the
 * store is read only when the verifier would read it). A router switched back to opaque tokens honours a JWT issued
 * before by its record; it asks this once the record is found (junk kids, of no record, never make the keys be read),
 * so that a token of a key replaced as leaked (`rotateSigningKey({ leaked: true })`, whose replacement leaves the token
 * records), or deleted (by a JWT instance retiring it, or by hand), is refused and inactive there too, and nothing the
 * key signed is honoured anywhere once the key is gone (RFC 9700 §4.14). The record, found by the token's exact text,
 * proves the header is the one we signed, so its `kid` is enough; no claim is checked (the record is what counts). Only
 * a token of JWS compact shape is asked about (`hasJwsSegments`); one without a readable `kid` was not signed here:
 * false. Keys that hold none verify none (a store's keys deleted by hand look like a store never given one).
 * @see RFC 9068 §4 (validation with the AS's keys), RFC 7662 §2.2 ("active"), RFC 7515 §4.1.4 (`kid`), §7.1.
 */
export async function tokenKeyVerifies(keys: KeyRing, token: string): Promise<boolean> {
  if (!hasJwsSegments(token)) return true;
  const kid = headerKid(token);
  if (kid === null) return false;
  return (await keys.findKey(kid)) !== null;
}
