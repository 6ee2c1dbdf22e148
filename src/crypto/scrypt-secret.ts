// Slow, salted hashing (scrypt, PHC string) for imported client secrets, which may be low-entropy.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * The parameters new hashes are made with: N = 2^15, r = 8, p = 1 (32 MiB, ~67 ms per hash or check on the
 * 2-core reference machine, measured 2026-11). A check runs once per process per integration thanks to the
 * verification cache, so the cost is paid by the first token request only.
 */
export const SCRYPT_PARAMS = { ln: 15, r: 8, p: 1 } as const;

const SALT_BYTES = 16;
const KEY_BYTES = 32;
/**
 * Limits on the parameters of an imported hash: beyond them one check would hold a libuv thread for seconds or
 * claim hundreds of MiB, which a wrong-secret flood would multiply.
 */
const MAX_LN = 20;
/** N·r·p: 8 times that of `SCRYPT_PARAMS` (and, as p ≥ 1, at most 256 MiB of memory). */
const MAX_WORK = 2 ** 21;

/** A parsed `$scrypt$ln=…,r=…,p=…$salt$hash` string. */
export interface ScryptHash {
  readonly ln: number;
  readonly r: number;
  readonly p: number;
  readonly salt: Buffer;
  readonly hash: Buffer;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{11,86})\$([A-Za-z0-9+/]{22,86})$/;

/**
 * Parses a PHC scrypt string (`$scrypt$ln=15,r=8,p=1$<salt>$<hash>`, salt and hash in unpadded standard
 * base64, as the PHC string format and `@phc/scrypt` write them).
 * @returns `null` when the string is not one, or its parameters are outside the accepted bounds
 *   (ln 1–20, N·r·p ≤ 2^21, i.e. at most 8 times our own cost; salt ≥ 8 bytes; hash 16–64 bytes).
 * @see RFC 7914 (scrypt), PHC string format (github.com/P-H-C/phc-string-format).
 */
export function parseScryptHash(value: string): ScryptHash | null {
  const match = PHC.exec(value);
  if (!match) return null;
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const salt = Buffer.from(match[4]!, 'base64');
  const hash = Buffer.from(match[5]!, 'base64');
  if (ln < 1 || ln > MAX_LN || r < 1 || p < 1) return null;
  if (2 ** ln * r * p > MAX_WORK) return null;
  if (salt.length < 8 || hash.length < 16 || hash.length > 64) return null;
  return { ln, r, p, salt, hash };
}

function derive(secret: string, salt: Buffer, length: number, ln: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** ln;
  // Node's default maxmem (32 MiB) is just under what N = 2^15, r = 8 needs; allow twice the working set.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    // The callback form runs on the libuv thread pool: the event loop keeps serving other requests.
    scrypt(secret, salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * Hashes a secret with scrypt and a fresh 128-bit salt, at `SCRYPT_PARAMS`.
 * @returns `$scrypt$ln=15,r=8,p=1$<salt>$<hash>`.
 * @see RFC 7914; RFC 6749 §2.3.1 (client password), RFC 9700 §4 (credentials at rest).
 */
export async function hashSecretScrypt(secret: string): Promise<string> {
  const { ln, r, p } = SCRYPT_PARAMS;
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(secret, salt, KEY_BYTES, ln, r, p);
  const b64 = (bytes: Buffer): string => bytes.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${ln},r=${r},p=${p}$${b64(salt)}$${b64(key)}`;
}

/**
 * Whether `presented` hashes to `stored` under its own salt and parameters, compared in constant time.
 * Asynchronous on the thread pool, never blocking the event loop.
 * @see RFC 7914; RFC 6749 §10.10.
 */
export async function verifyScrypt(stored: ScryptHash, presented: string): Promise<boolean> {
  const key = await derive(presented, stored.salt, stored.hash.length, stored.ln, stored.r, stored.p);
  return timingSafeEqual(key, stored.hash);
}
