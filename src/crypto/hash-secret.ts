// SHA-256 at rest for high-entropy secrets: client secrets, codes and tokens.
import { createHash } from 'node:crypto';

/**
 * base64url SHA-256 of a secret. A 256-bit random secret needs no slow password hash: brute force is
 * infeasible either way, and scrypt would cost ~36 ms per token request.
 * @see RFC 6749 §10.3, §10.5 (codes and tokens must be protected), RFC 9700 §4.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}
