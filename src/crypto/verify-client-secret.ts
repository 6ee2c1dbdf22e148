// Checks a presented client secret against the hash an integration's record keeps.
import { hashSecret } from './hash-secret.js';
import { constantEquals } from './constant-equals.js';
import { parseScryptHash, verifyScrypt } from './scrypt-secret.js';
import { VerificationCache } from './verification-cache.js';
import { isBcryptHash, verifyBcrypt } from './bcrypt-secret.js';

const DOLLAR = 36;
const cache = new VerificationCache();
/** Checks under way, so a burst of requests with the same credentials pays one scrypt, not one each. */
const pending = new Map<string, Promise<boolean>>();

async function verifySlow(storedHash: string, presented: string): Promise<boolean> {
  const key = cache.key(storedHash, presented);
  if (cache.has(key)) return true;
  const parsed = parseScryptHash(storedHash);
  // A hash this package cannot read matches nothing: the integration is locked out, never let in.
  if (!parsed && !isBcryptHash(storedHash)) return false;
  let check = pending.get(key);
  if (!check) {
    check = (parsed ? verifyScrypt(parsed, presented) : verifyBcrypt(storedHash, presented)).finally(() => pending.delete(key));
    pending.set(key, check);
  }
  const matches = await check;
  if (matches) cache.add(key);
  return matches;
}

/**
 * Whether checking `presented` against a slow `storedHash` would cost nothing new: it matched before in this
 * process, or the same check is under way (a caller then joins it). The client-authentication limit lets such a
 * check through without waiting its turn: only a check that would start a new scrypt or bcrypt is queued.
 * @see RFC 6819 §4.3.5 (online guessing), RFC 6749 §2.3.1.
 */
export function isKnownOrPending(storedHash: string, presented: string): boolean {
  const key = cache.key(storedHash, presented);
  return cache.has(key) || pending.has(key);
}

/**
 * Whether a stored hash is one of the slow, salted formats (`$scrypt$…`, bcrypt's `$2…$`), told by its first
 * character as `verifyClientSecret` tells it. Any other value is compared as a plain SHA-256.
 * @see RFC 6749 §2.3.1, §10.10.
 */
export function isSlowSecretHash(storedHash: string): boolean {
  return storedHash.charCodeAt(0) === DOLLAR;
}

/**
 * True when `presented` is the secret whose hash is `storedHash`, compared in constant time. The format is
 * told by the first character, so the hot path (our SHA-256 of a 256-bit generated secret) costs exactly
 * one SHA-256 and one comparison, as before:
 * - SHA-256 base64url (generated secrets): hash and compare;
 * - `$scrypt$…` (imported secrets, possibly low-entropy): scrypt on the libuv thread pool (~67 ms at our
 *   parameters), then constant-time compare; a match is remembered per process (keyed by the stored hash
 *   and an HMAC of the secret, see `VerificationCache`), so only the first request per process pays it.
 *   A wrong secret pays it every time, which the client-authentication rate limit bounds: it lets one new slow
 *   check run at a time per source and counts its failure before the next starts (`slowCheck`).
 * - `$2a$`/`$2b$`/`$2y$` (imported bcrypt, cost ≤ 12): bcryptjs in a worker thread, cached the same way.
 * A check that cannot be made rejects rather than answer false: a worker that stopped or hung with the check under
 * way or cannot start (`BcryptWorkerError`), a bcryptjs that cannot be found, a failed scrypt. The router answers those
 * 500 `server_error` and logs them; the client-authentication limit counts only a false.
 * @see RFC 6749 §2.3.1 (client password), §5.2, §10.10; RFC 9700 §4; RFC 7914 (scrypt).
 */
export async function verifyClientSecret(storedHash: string, presented: string): Promise<boolean> {
  if (isSlowSecretHash(storedHash)) return verifySlow(storedHash, presented);
  return constantEquals(hashSecret(presented), storedHash);
}
