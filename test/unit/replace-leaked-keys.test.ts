// replaceLeakedSigningKeys never deletes the key it has just saved, whatever the store does to its creation time.
import { describe, expect, it, vi } from 'vitest';
import { replaceLeakedSigningKeys } from '../../src/jwt/replace-leaked-keys.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { SigningKeyStore } from '../../src/stores/contract.js';
import { createStoreKeyRing } from '../../src/jwt/store-key-ring.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

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

  it('the store down right after a replacement: the instance neither signs nor verifies with a deleted key, and says why', async () => {
    const memory = createMemoryStore({ sweepIntervalSeconds: 0 }).keys!;
    let down = false;
    const flaky: SigningKeyStore = {
      listSigningKeys: async () => {
        if (down) throw new StoreUnavailableError('Redis store unavailable (connection lost)');
        return memory.listSigningKeys();
      },
      saveSigningKey: (record, options) => memory.saveSigningKey(record, options),
      deleteSigningKey: async (kid) => {
        const done = await memory.deleteSigningKey!(kid);
        down = true;
        return done;
      },
    };
    const errors: string[] = [];
    const ring = createStoreKeyRing(flaky, 3600, { warn() {}, error(message: string) { errors.push(message); } });
    const old = await ring.signer();
    const replaced = await ring.rotate({ leaked: true });
    expect(replaced.deleted).toEqual([old.kid]);
    expect(errors).toEqual([expect.stringContaining('reading them again failed')]);
    await expect(ring.signer()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(ring.stillVerifies(old.kid)).toBe(false);
    // Refused: 401 by its absence, or 503 while the store is read again in vain (as for any unknown kid then).
    expect(await ring.findKey(old.kid).catch((error: unknown) => (error instanceof StoreUnavailableError ? null : error))).toBeNull();
    down = false;
    // The read stillVerifies started in the background while the store was down may still be failing: the next signer
    // joins it (refused once), and the one after reads the store again.
    await vi.waitFor(async () => { expect((await ring.signer()).kid).toBe(replaced.kid); });
  });
});

describe('RFC 9700 §4.14: a leaked-key replacement on a store with keys.replaceSigningKeys is that one call', () => {
  it('it neither saves nor deletes otherwise (a store with replaceSigningKeys alone suffices), and reports the call\'s kids', async () => {
    const memory = createMemoryStore({ sweepIntervalSeconds: 0 }).keys!;
    const leaked = generateSigningKeyRecord(new Date(Date.now() - 60_000));
    await memory.saveSigningKey(leaked);
    const calls: string[] = [];
    const replacing: SigningKeyStore = {
      listSigningKeys: () => { calls.push('list'); return memory.listSigningKeys(); },
      saveSigningKey: (record, options) => { calls.push('save'); return memory.saveSigningKey(record, options); },
      replaceSigningKeys: (record) => { calls.push('replace'); return memory.replaceSigningKeys!(record); },
    };
    const replaced = await replaceLeakedSigningKeys(replacing);
    expect(calls).toEqual(['replace']);
    expect(replaced).toEqual({ kid: replaced.kid, signingKid: replaced.kid, deleted: [leaked.kid] });
    expect((await memory.listSigningKeys()).map((key) => key.kid)).toEqual([replaced.kid]);
  });

  it('the store failing it rejects with the store\'s error, not SigningKeysReplacementIncompleteError: nothing is half done', async () => {
    const memory = createMemoryStore({ sweepIntervalSeconds: 0 }).keys!;
    const outage = new StoreUnavailableError('PostgreSQL store unavailable (connection lost)');
    const failing: SigningKeyStore = { ...memory, replaceSigningKeys: () => Promise.reject(outage) };
    await expect(replaceLeakedSigningKeys(failing)).rejects.toBe(outage);
  });
});
