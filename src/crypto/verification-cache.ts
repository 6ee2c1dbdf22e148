// A bounded in-process memory of successful slow-hash checks (scrypt, bcrypt), so each runs once per process per secret.
import { createHmac, randomBytes } from 'node:crypto';

/** Entries kept by the process-wide cache: one per (stored hash, secret) pair that checked out. */
export const VERIFICATION_CACHE_SIZE = 10_000;

/**
 * Remembers that a presented secret matched a stored hash. The key is the stored hash plus an HMAC of the
 * secret under a random per-process key: the secret itself is never kept, the HMAC is useless outside this
 * process, and any change of the stored hash (rotation, re-import, another integration) is a different key,
 * so a cached answer can only ever be given for the very hash it was computed against. Only successes are
 * remembered: a wrong secret is checked in full every time (the client-authentication rate limit bounds it).
 * When full, the oldest entry is dropped (insertion order).
 * @see RFC 6749 §2.3.1, §10.10.
 */
export class VerificationCache {
  readonly #entries = new Set<string>();
  readonly #key = randomBytes(32);

  constructor(readonly maxEntries: number = VERIFICATION_CACHE_SIZE) {}

  /** The entry of a (stored hash, presented secret) pair: the hash and an HMAC of the secret, never the secret. */
  key(storedHash: string, presented: string): string {
    return `${storedHash}\n${createHmac('sha256', this.#key).update(presented).digest('base64url')}`;
  }

  /** Whether the pair of `key` was seen to match in this process. */
  has(entry: string): boolean {
    return this.#entries.has(entry);
  }

  /** Records that the pair of `key` matched. */
  add(entry: string): void {
    this.#entries.delete(entry);
    this.#entries.add(entry);
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.values().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /** How many matches are remembered. */
  get size(): number {
    return this.#entries.size;
  }
}
