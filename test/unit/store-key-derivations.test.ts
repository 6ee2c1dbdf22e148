// Keys the PostgreSQL and Redis stores derive and other instances must derive alike: pinned to their first definitions.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lockKey } from '../../src/stores/postgres/query.js';
import { clientRevisionOf, keyPart } from '../../src/stores/redis/codec.js';

describe('PostgreSQL advisory-lock keys: the same for every instance and every version (rolling upgrades share locks)', () => {
  /** How the key was first defined: the SHA-256 of the JSON array, its first 8 bytes as a signed big-endian integer. */
  const reference = (namespace: string, ...parts: string[]): bigint =>
    createHash('sha256').update(JSON.stringify([namespace, ...parts])).digest().readBigInt64BE(0);

  it('is the first 8 bytes of the SHA-256 of the JSON array, signed, for any namespace and parts', () => {
    fc.assert(fc.property(fc.string(), fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 4 }), (namespace, parts) => {
      expect(lockKey(namespace, ...parts)).toBe(reference(namespace, ...parts));
    }), { numRuns: 3000 });
  });

  it('covers the whole signed 64-bit range: keys with the top bit set are negative', () => {
    const keys = Array.from({ length: 64 }, (_, n) => lockKey('ns', 'client', `c${n}`));
    expect(keys.some((key) => key < 0n)).toBe(true);
    expect(keys.some((key) => key > 0n)).toBe(true);
    for (const key of keys) expect(BigInt.asIntN(64, key)).toBe(key);
  });
});

describe('Redis integration revisions: what SAVE_TOKENS computes in Lua (SHA-1 of the length-prefixed fields)', () => {
  it('is the hex SHA-1 of each field as <bytes>:<value>, or - when missing', () => {
    fc.assert(fc.property(fc.array(fc.option(fc.string({ unit: 'grapheme' }), { nil: null }), { maxLength: 14 }), (values) => {
      const joined = values.map((value) => (value === null ? '-' : `${Buffer.byteLength(value)}:${value}`)).join('');
      expect(clientRevisionOf(values)).toBe(createHash('sha1').update(joined).digest('hex'));
    }), { numRuns: 2000 });
  });
});

describe('Redis key parts: every version writes the same key for an id', () => {
  it('is encodeURIComponent of any id it accepts, whichever characters the id is made of', () => {
    const unreserved = fc.constantFrom(...'ABCXYZabcxyz0189_-.!~*\'()'.split(''));
    const ids = fc.oneof(fc.string({ unit: unreserved }), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.string());
    fc.assert(fc.property(ids, (id) => {
      let expected: string;
      try {
        expected = encodeURIComponent(id);
      } catch {
        return; // a lone surrogate: its own form, below
      }
      expect(keyPart(id)).toBe(expected);
    }), { numRuns: 5000 });
  });

  it('writes a lone surrogate as %uXXXX, which encodeURIComponent never produces', () => {
    expect(keyPart('a\ud800b')).toBe('a%uD800b');
  });
});
