// Recognises the stored client-secret hash formats: our SHA-256, the PHC scrypt string and bcrypt.
import { parseScryptHash } from './scrypt-secret.js';
import { isBcryptHash } from './bcrypt-secret.js';

/** The formats a `clientSecretHash` may have. */
export type SecretHashFormat = 'sha256' | 'scrypt' | 'bcrypt';

const SHA256_BASE64URL = /^[A-Za-z0-9_-]{43}$/;

/**
 * The format of a stored hash, or `null` for one this package cannot check:
 * - `sha256`: 43 characters of base64url, what `hashSecret` makes for generated 256-bit secrets;
 * - `scrypt`: `$scrypt$ln=…,r=…,p=…$<salt>$<hash>` within `parseScryptHash`'s bounds;
 * - `bcrypt`: `$2a$`, `$2b$` or `$2y$` with a cost from 4 to `MAX_BCRYPT_COST`.
 * @see RFC 6749 §2.3.1; RFC 7914.
 */
export function secretHashFormat(value: string): SecretHashFormat | null {
  if (SHA256_BASE64URL.test(value)) return 'sha256';
  if (parseScryptHash(value)) return 'scrypt';
  if (isBcryptHash(value)) return 'bcrypt';
  return null;
}
