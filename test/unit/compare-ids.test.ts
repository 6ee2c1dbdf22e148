// compareIds is the binary order the SQL stores use: that of the ids' UTF-8 bytes, i.e. of their code points.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareIds, isStoreId } from '../../src/stores/store-policy.js';

const sign = (n: number): number => Math.sign(n);

describe('compareIds: the order of the UTF-8 bytes (SQLite BINARY, PostgreSQL COLLATE "C")', () => {
  it('agrees with Buffer.compare of the UTF-8 encodings for any two strings of whole code points', () => {
    const id = fc.string({ unit: 'binary', maxLength: 12 });
    fc.assert(fc.property(id, id, (a, b) => {
      expect(sign(compareIds(a, b))).toBe(sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))));
    }), { numRuns: 5_000 });
  });

  it('puts U+FF21 before U+1F600, where UTF-16 code units put the surrogate pair first', () => {
    expect(compareIds('\uFF21', '\u{1F600}')).toBeLessThan(0);
    expect('\uFF21' < '\u{1F600}').toBe(false);
    expect(compareIds('B', 'a')).toBeLessThan(0);
    expect(compareIds('ab', 'a')).toBeGreaterThan(0);
    expect(compareIds('same', 'same')).toBe(0);
  });

  it('is only ever asked about storable ids: isStoreId refuses a lone surrogate, which UTF-8 cannot encode', () => {
    for (const id of ['\uD800', 'x\uD800', '\uDC00x', 'a\uDFFF\uD800b']) expect(isStoreId(id)).toBe(false);
    for (const id of ['\u{1F600}', 'x\u{10FFFF}', '\uFF21']) expect(isStoreId(id)).toBe(true);
  });
});
