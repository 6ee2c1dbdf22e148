// Makes a fresh ES256 key for the store when the host supplies none (first start, rotation).
import { generateKeyPairSync } from 'node:crypto';
import type { SigningKeyRecord } from '../stores/contract.js';
import { toSigningKey } from './signing-key.js';

/**
 * A new P-256 key as a store record: PKCS#8 PEM, kid its RFC 7638 thumbprint. ES256 because its signatures
 * are small (64 bytes) and every JOSE library verifies them.
 * @see RFC 9068 §4, RFC 7518 §3.4 (ES256), RFC 7638 (kid).
 */
export function generateSigningKeyRecord(createdAt: Date): SigningKeyRecord {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kid } = toSigningKey(privateKey);
  const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return { kid, algorithm: 'ES256', privateKeyPem, createdAt };
}
