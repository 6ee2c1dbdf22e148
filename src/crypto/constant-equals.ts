// Constant-time comparison, so that response time tells nothing about how much of a secret matched.
import { timingSafeEqual } from 'node:crypto';

/**
 * Compares two strings in time independent of where they differ. Callers compare hashes, which have
 * equal length; a length difference returns false at once, leaking only the length of a hash.
 * @see RFC 6749 §10.10, RFC 9700 §4.
 */
export function constantEquals(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}
