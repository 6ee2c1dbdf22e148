// 256-bit random values for secrets, codes, tokens and ids.
import { randomFillSync } from 'node:crypto';

const TOKEN_BYTES = 32;
/** 128 values per refill: one CSPRNG call instead of one per value (as Node's own randomUUID caches). */
const pool = Buffer.alloc(TOKEN_BYTES * 128);
let offset = pool.length;

/**
 * A fresh 256-bit random value, base64url (43 characters).
 * Synchronous on purpose: the callback form of `randomBytes` costs ~40 µs. Values are cut from a pool filled
 * by `randomFillSync` (the same CSPRNG as `randomBytes`), which costs a sixth of a `randomBytes(32)` call per
 * value; each value's bytes are zeroed once encoded, so the pool never hands out or keeps a value twice.
 * @see RFC 6749 §10.10 (credentials guessing), RFC 9700 §4.1.
 */
export function createRandomToken(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const end = offset + TOKEN_BYTES;
  const value = pool.toString('base64url', offset, end);
  pool.fill(0, offset, end);
  offset = end;
  return value;
}
