// Conformance rules for the optional signing-key part (store.keys): round trip, order, no replace, insert-if-none.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it, type TestContext } from 'vitest';
import type { SigningKeyRecord, SigningKeyStore } from '../stores/contract.js';
import { secondsFromNow, type GetStore } from './conformance-fixtures.js';

/** A signing-key record with a real P-256 PKCS#8 PEM (a store may check it) and a random kid. */
function buildKey(overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    kid: randomBytes(32).toString('base64url'),
    algorithm: 'ES256',
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    createdAt: secondsFromNow(-60),
    ...overrides,
  };
}

/**
 * Registers the SigningKeyStore rules. `store.keys` is optional: a store without it skips each of these
 * tests, named so in the report, because it then simply cannot back JWT access tokens with generated keys.
 * @see RFC 9068 §4 (keys that verify access tokens), RFC 7517 §5 (the JWK Set they are published in).
 */
export function describeSigningKeyRules(getStore: GetStore): void {
  const keysOf = (context: TestContext): SigningKeyStore => {
    const keys = getStore().keys;
    if (!keys) return context.skip('store.keys is absent (optional part): signing-key rules do not apply');
    return keys;
  };

  describe('signing keys (optional store.keys; skipped when the store has none)', () => {
    it('listSigningKeys resolves an empty array on an empty store', async (context) => {
      expect(await keysOf(context).listSigningKeys()).toEqual([]);
    });

    it('saveSigningKey then listSigningKeys round-trips every field, with createdAt as a Date', async (context) => {
      const keys = keysOf(context);
      const key = buildKey();
      expect(await keys.saveSigningKey(key)).toBe(true);
      const listed = await keys.listSigningKeys();
      expect(listed).toEqual([key]);
      expect(listed[0]?.createdAt).toBeInstanceOf(Date);
      expect(listed[0]?.createdAt.getTime()).toBe(key.createdAt.getTime());
    });

    it('every algorithm name round-trips (ES256, RS256, EdDSA)', async (context) => {
      const keys = keysOf(context);
      const saved = (['ES256', 'RS256', 'EdDSA'] as const).map((algorithm, i) => buildKey({ algorithm, createdAt: secondsFromNow(-30 + i) }));
      for (const key of saved) await keys.saveSigningKey(key);
      expect((await keys.listSigningKeys()).map((key) => key.algorithm)).toEqual(['ES256', 'RS256', 'EdDSA']);
    });

    it('listSigningKeys orders by createdAt, then kid', async (context) => {
      const keys = keysOf(context);
      const at = secondsFromNow(-100);
      const newest = buildKey({ createdAt: secondsFromNow(-10) });
      const tieB = buildKey({ kid: `b-${randomBytes(8).toString('hex')}`, createdAt: at });
      const tieA = buildKey({ kid: `a-${randomBytes(8).toString('hex')}`, createdAt: at });
      const oldest = buildKey({ createdAt: secondsFromNow(-1000) });
      for (const key of [newest, tieB, oldest, tieA]) await keys.saveSigningKey(key);
      expect((await keys.listSigningKeys()).map((key) => key.kid)).toEqual([oldest.kid, tieA.kid, tieB.kid, newest.kid]);
    });

    it('saveSigningKey never replaces: the same kid again resolves false and keeps the first record', async (context) => {
      const keys = keysOf(context);
      const first = buildKey();
      await keys.saveSigningKey(first);
      expect(await keys.saveSigningKey(buildKey({ kid: first.kid, createdAt: secondsFromNow(0) }))).toBe(false);
      expect(await keys.listSigningKeys()).toEqual([first]);
    });

    it('onlyIfNone inserts into an empty store and is refused (false, nothing written) once a key exists', async (context) => {
      const keys = keysOf(context);
      const first = buildKey();
      expect(await keys.saveSigningKey(first, { onlyIfNone: true })).toBe(true);
      expect(await keys.saveSigningKey(buildKey(), { onlyIfNone: true })).toBe(false);
      expect(await keys.listSigningKeys()).toEqual([first]);
      // A plain save (rotation) still inserts beside it.
      expect(await keys.saveSigningKey(buildKey({ createdAt: secondsFromNow(0) }))).toBe(true);
      expect(await keys.listSigningKeys()).toHaveLength(2);
    });

    it('of 10 concurrent onlyIfNone saves on an empty store exactly one inserts (instances converge on one key)', async (context) => {
      const keys = keysOf(context);
      const candidates = Array.from({ length: 10 }, () => buildKey());
      const results = await Promise.all(candidates.map((key) => keys.saveSigningKey(key, { onlyIfNone: true })));
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = candidates[results.indexOf(true)];
      expect(await keys.listSigningKeys()).toEqual([winner]);
    });
  });
}
