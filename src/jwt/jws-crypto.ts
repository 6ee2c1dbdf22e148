// JWS signatures with node:crypto and keys parsed once: synchronous, no WebCrypto job per token (DESIGN §3a).
import { sign, verify, type KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from '../stores/contract.js';

/** ES256 signatures are R || S, 32 bytes each (RFC 7518 §3.4), not DER. */
const P1363 = 'ieee-p1363' as const;

/**
 * Signs the JWS signing input with `algorithm`: ES256 (ECDSA P-256 SHA-256, R||S), RS256 (RSASSA-PKCS1-v1_5
 * SHA-256) or EdDSA (Ed25519, no pre-hash).
 * @see RFC 7515 §5.1, RFC 7518 §3.3–3.4, RFC 8037 §3.1.
 */
export function jwsSign(algorithm: SigningAlgorithm, key: KeyObject, input: Buffer): Buffer {
  switch (algorithm) {
    case 'ES256': return sign('sha256', input, { key, dsaEncoding: P1363 });
    case 'RS256': return sign('sha256', input, key);
    case 'EdDSA': return sign(null, input, key);
  }
}

/**
 * Checks a JWS signature; `false` (never a throw) for a wrong or malformed one. An ES256 signature must be
 * exactly 64 bytes: OpenSSL would otherwise accept other encodings of the same value.
 * @see RFC 7515 §5.2 step 8, RFC 7518 §3.4 ("MUST validate … 64-octet sequence"), RFC 8037 §3.1.
 */
export function jwsVerify(algorithm: SigningAlgorithm, key: KeyObject, input: Buffer, signature: Buffer): boolean {
  try {
    switch (algorithm) {
      case 'ES256': return signature.length === 64 && verify('sha256', input, { key, dsaEncoding: P1363 }, signature);
      case 'RS256': return verify('sha256', input, key, signature);
      case 'EdDSA': return verify(null, input, key, signature);
    }
  } catch {
    return false;
  }
}
