// Whether a JWT an opaque router honoured before, by its record, was signed by a key that no longer verifies.
import type { KeyRing } from './key-ring.js';
import { hasJwsSegments, headerKid } from './token-key-verifies.js';

/**
 * The synchronous twin of `tokenKeyVerifies`, for a token requireBearer's cache holds (so it passed that check): true
 * when its key no longer verifies by the keys as last loaded (`stillVerifies`, no store read waited for), e.g. replaced
 * as leaked since, by this instance or, once it has read the keys again, by another. An opaque token costs two character
 * searches, so the cache hit stays the hot path it is.
 * @see RFC 9068 §4, RFC 9700 §4.14.
 */
export function tokenKeyRetired(keys: KeyRing, token: string): boolean {
  if (!hasJwsSegments(token)) return false;
  const kid = headerKid(token);
  return kid === null || !keys.stillVerifies(kid);
}
