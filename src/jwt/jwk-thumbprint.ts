// RFC 7638 JWK thumbprints: the kid of every signing key, computed rather than chosen so all instances agree.
import { createHash, type JsonWebKey } from 'node:crypto';

/** The required members of each key type, in the lexicographic order RFC 7638 §3.2 hashes them in. */
const REQUIRED_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  OKP: ['crv', 'kty', 'x'],
};

/**
 * base64url SHA-256 of the key's required public members, serialised with no whitespace in lexicographic
 * order. Two instances holding the same key always compute the same kid.
 * @throws TypeError for a key type this package does not sign with.
 * @see RFC 7638 §3 (computing), §3.2 (required members), RFC 8037 §2 (OKP).
 */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const members = typeof jwk.kty === 'string' ? REQUIRED_MEMBERS[jwk.kty] : undefined;
  if (!members) throw new TypeError(`unsupported JWK key type ${String(jwk.kty)}`);
  // Members are base64url or fixed names: JSON.stringify of each string is exactly the RFC 7638 form.
  const json = `{${members.map((name) => `${JSON.stringify(name)}:${JSON.stringify(jwk[name])}`).join(',')}}`;
  return createHash('sha256').update(json, 'utf8').digest('base64url');
}
