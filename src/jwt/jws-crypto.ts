// JWS signatures with node:crypto and keys parsed once: synchronous, no WebCrypto job per token (DESIGN §3a).
import { sign, verify, type KeyObject } from 'node:crypto';
import type { SigningAlgorithm } from '../stores/contract.js';

/** ES256 signatures are R || S, 32 bytes each (RFC 7518 §3.4), not DER. */
const P1363 = 'ieee-p1363' as const;
/** The order n of P-256 and n/2: an S above n/2 has a twin, n − S, that verifies the same. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const P256_HALF_N = P256_N >> 1n;

function sOf(signature: Buffer): bigint {
  return BigInt(`0x${signature.subarray(32, 64).toString('hex')}`);
}

/**
 * The low-S form of an ES256 signature: (R, n − S) when S > n/2. OpenSSL picks either at random; one fixed
 * form means one text per signed token, so a token cannot be reissued under a second spelling.
 */
function toLowS(signature: Buffer): Buffer {
  const s = sOf(signature);
  if (s <= P256_HALF_N) return signature;
  const low = Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex');
  return Buffer.concat([signature.subarray(0, 32), low]);
}

/**
 * Signs the JWS signing input with `algorithm`: ES256 (ECDSA P-256 SHA-256, R||S, always low-S), RS256
 * (RSASSA-PKCS1-v1_5 SHA-256) or EdDSA (Ed25519, no pre-hash).
 * @see RFC 7515 §5.1, RFC 7518 §3.3–3.4, RFC 8037 §3.1.
 */
export function jwsSign(algorithm: SigningAlgorithm, key: KeyObject, input: Buffer): Buffer {
  switch (algorithm) {
    case 'ES256': return toLowS(sign('sha256', input, { key, dsaEncoding: P1363 }));
    case 'RS256': return sign('sha256', input, key);
    case 'EdDSA': return sign(null, input, key);
  }
}

/**
 * Checks a JWS signature; `false` (never a throw) for a wrong or malformed one. An ES256 signature must be
 * exactly 64 bytes (OpenSSL would otherwise accept other encodings of the same value) and low-S (S ≤ n/2):
 * the high-S twin of a valid signature verifies too, and would give one token a second text (signature
 * malleability); jwsSign makes only low-S ones.
 * @see RFC 7515 §5.2 step 8, RFC 7518 §3.4 ("MUST validate … 64-octet sequence"), RFC 8037 §3.1,
 * SEC 1 v2 §4.1.4 (verification), BIP 62 (low-S as the canonical form).
 */
export function jwsVerify(algorithm: SigningAlgorithm, key: KeyObject, input: Buffer, signature: Buffer): boolean {
  try {
    switch (algorithm) {
      case 'ES256': return signature.length === 64 && sOf(signature) <= P256_HALF_N && verify('sha256', input, { key, dsaEncoding: P1363 }, signature);
      case 'RS256': return verify('sha256', input, key, signature);
      case 'EdDSA': return verify(null, input, key, signature);
    }
  } catch {
    return false;
  }
}
