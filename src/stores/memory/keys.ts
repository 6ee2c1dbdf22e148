// The memory store's signing-key part: records kept as JSON strings, insert-if-none and replacement each in one synchronous block.
import type { SaveSigningKeyOptions, SigningKeyRecord, SigningKeyStore } from '../contract.js';
import { compareSigningKeys } from '../store-policy.js';

interface StoredKey {
  readonly kid: string;
  readonly algorithm: SigningKeyRecord['algorithm'];
  readonly privateKeyPem: string;
  readonly createdAt: string;
}

function encode(record: SigningKeyRecord): string {
  const stored: StoredKey = { ...record, createdAt: record.createdAt.toISOString() };
  return JSON.stringify(stored);
}

function decode(json: string): SigningKeyRecord {
  const stored = JSON.parse(json) as StoredKey;
  return { ...stored, createdAt: new Date(stored.createdAt) };
}

/**
 * Signing keys in a Map. `ready` is the memory store's gate (a later event-loop turn, refused once closed).
 * Check and insert run with no await in between, so of N concurrent `onlyIfNone` saves exactly one inserts; a
 * replacement's deletes and insert likewise, so concurrent replacements leave one key.
 * @see RFC 9068 §4, RFC 7517 §5.
 */
export function createMemoryKeyStore(ready: () => Promise<void>): SigningKeyStore {
  const keys = new Map<string, string>();
  return {
    async listSigningKeys(): Promise<readonly SigningKeyRecord[]> {
      await ready();
      return [...keys.values()]
        .map(decode)
        .sort(compareSigningKeys);
    },
    async saveSigningKey(record: SigningKeyRecord, options: SaveSigningKeyOptions = {}): Promise<boolean> {
      await ready();
      if (keys.has(record.kid) || (options.onlyIfNone === true && keys.size > 0)) return false;
      keys.set(record.kid, encode(record));
      return true;
    },
    async deleteSigningKey(kid: string): Promise<boolean> {
      await ready();
      return keys.delete(kid);
    },
    async replaceSigningKeys(record: SigningKeyRecord): Promise<readonly string[]> {
      await ready();
      const deleted = [...keys.keys()].filter((kid) => kid !== record.kid);
      for (const kid of deleted) keys.delete(kid);
      if (!keys.has(record.kid)) keys.set(record.kid, encode(record));
      return deleted;
    },
  };
}
