// replaceLeakedSigningKeys never deletes the key it has just saved, whatever the store does to its creation time.
import { describe, expect, it } from 'vitest';
import { replaceLeakedSigningKeys } from '../../src/jwt/replace-leaked-keys.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { SigningKeyStore } from '../../src/stores/contract.js';

describe('RFC 9068 §4, RFC 9700 §4.10: a leaked-key replacement leaves its new key in the store', () => {
  it('a store that keeps createdAt to the second (a DATETIME column) still holds the new key, and the leaked one is gone', async () => {
    const memory = createMemoryStore({ sweepIntervalSeconds: 0 }).keys!;
    // Such a store lists the new key a few hundred ms older than the record saved, so it sorted before itself.
    const truncating: SigningKeyStore = {
      listSigningKeys: async () => (await memory.listSigningKeys()).map((key) => ({ ...key, createdAt: new Date(Math.floor(key.createdAt.getTime() / 1000) * 1000) })),
      saveSigningKey: (record, options) => memory.saveSigningKey(record, options),
      deleteSigningKey: (kid) => memory.deleteSigningKey!(kid),
    };
    const leaked = generateSigningKeyRecord(new Date(Date.now() - 60_000));
    await memory.saveSigningKey(leaked);
    const replaced = await replaceLeakedSigningKeys(truncating);
    expect(replaced.deleted).toEqual([leaked.kid]);
    expect((await memory.listSigningKeys()).map((key) => key.kid)).toEqual([replaced.kid]);
    // Again within the second: the two new keys tie there (kid order decides), but neither replacement deletes its own.
    for (let round = 0; round < 5; round++) {
      const again = await replaceLeakedSigningKeys(truncating);
      expect(again.deleted).not.toContain(again.kid);
      expect((await memory.listSigningKeys()).map((key) => key.kid)).toContain(again.kid);
    }
  });
});
