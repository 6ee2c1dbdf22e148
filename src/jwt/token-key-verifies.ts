// Whether a presented JWT access token's signing key still verifies here: introspection answers as requireBearer does.
import type { KeyRing } from './key-ring.js';
import { decodeJsonObjectSegment } from './base64url.js';

/**
 * Whether the key named by `token`'s `kid` still verifies with `keys` (`findKey`: answered from the keys loaded; the
 * store is read only when the verifier would read it). A token of a key replaced as leaked (`rotateSigningKey({ leaked:
 * true })`), retired, or dropped from `jwt.signingKeys` is refused by requireBearer whatever its record says;
 * introspection, which finds a token by its record, asks this first, so that it calls such a token inactive too and
 * nothing the key signed is honoured anywhere once the key is gone (RFC 9700 §4.14).
 * Only a token of JWS compact shape (three segments) is asked about: an opaque token has no dot or one (a time prefix,
 * ordered-token.ts), so it costs two character searches and no decoding. A JWS without a readable `kid` was not signed
 * here: false.
 * @see RFC 9068 §4 (validation with the AS's keys), RFC 7662 §2.2 ("active"), RFC 7515 §4.1.4 (`kid`), §7.1.
 */
export async function tokenKeyVerifies(keys: KeyRing, token: string): Promise<boolean> {
  const first = token.indexOf('.');
  if (first < 0 || token.indexOf('.', first + 1) < 0) return true;
  const header = decodeJsonObjectSegment(token.slice(0, first));
  if (header === null || typeof header.kid !== 'string' || header.kid.length === 0) return false;
  return (await keys.findKey(header.kid)) !== null;
}
