// A bounded in-process memory of successful slow-hash checks (scrypt, bcrypt), so each runs once per process per secret.
import { createHmac, randomBytes } from 'node:crypto';

/**
 * Entries kept by the process-wide cache: one per (stored hash, secret) pair that checked out. Only a secret that
 * matched adds one, so what fills it is the registry (an integration and, in a rotation's grace, its previous
 * secret), which an administrator sizes, not a caller. 10,000 made a registry past it pay again: with a random one
 * of 20,000 imported integrations per request, half the token requests ran a scrypt (~67 ms of a libuv thread each).
 * A million entries of about 90 bytes (one 43-character HMAC) bound the heap at about 90 MB, reached only by as
 * many imported integrations authenticating in one process.
 */
export const VERIFICATION_CACHE_SIZE = 1_000_000;

/**
 * Remembers that a presented secret matched a stored hash. The key is an HMAC, under a random per-process key,
 * of the stored hash (length-prefixed) and the secret: neither is kept, the HMAC is useless outside this
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

  /** The entry of a (stored hash, presented secret) pair: one HMAC of both, never the secret. */
  key(storedHash: string, presented: string): string {
    // The length prefix keeps ("ab", "c") and ("a", "bc") apart.
    return createHmac('sha256', this.#key).update(`${storedHash.length}:${storedHash}`).update(presented).digest('base64url');
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
