// SHA-256 at rest for high-entropy secrets: client secrets, codes and tokens.
import { hash } from 'node:crypto';

/**
 * base64url SHA-256 of a secret. A 256-bit random secret needs no slow password hash: brute force is
 * infeasible either way, and scrypt would cost ~36 ms per token request. One-shot `crypto.hash` (Node ≥ 20.12)
 * builds no Hash object: about half the cost of `createHash().update().digest()`, twice per token request.
 * @see RFC 6749 §10.3, §10.5 (codes and tokens must be protected), RFC 9700 §4.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'base64url');
}
