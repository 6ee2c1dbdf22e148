// Checks a presented client secret against the hash an integration's record keeps.
import { hashSecret } from './hash-secret.js';
import { constantEquals } from './constant-equals.js';

/**
 * True when `presented` is the secret whose hash is `storedHash`, compared in constant time. Async so that
 * slow, salted formats (imported low-entropy secrets) can be checked off the event loop.
 * @see RFC 6749 §2.3.1 (client password), §10.10; RFC 9700 §4.
 */
export async function verifyClientSecret(storedHash: string, presented: string): Promise<boolean> {
  return constantEquals(hashSecret(presented), storedHash);
}
