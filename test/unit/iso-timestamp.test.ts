// The PostgreSQL store's ISO timestamps are toISOString's, character for character (ECMA-262 §21.4.1.32).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/stores/postgres/iso-timestamp.js';

/** The largest time value a Date holds (ECMA-262 §21.4.1.31): ±8.64e15 ms. */
const LIMIT = 8.64e15;

describe('isoTimestamp writes what Date.prototype.toISOString writes', () => {
  it('for any time value a Date holds', () => {
    fc.assert(fc.property(fc.integer({ min: -LIMIT, max: LIMIT }), (ms) => {
      const date = new Date(ms);
      expect(isoTimestamp(date)).toBe(date.toISOString());
    }), { numRuns: 20_000 });
  });

  it('for the years a token lives in, to the millisecond', () => {
    const from = Date.UTC(1990, 0, 1);
    const to = Date.UTC(2200, 0, 1);
    fc.assert(fc.property(fc.integer({ min: from, max: to }), (ms) => {
      const date = new Date(ms);
      expect(isoTimestamp(date)).toBe(date.toISOString());
    }), { numRuns: 20_000 });
  });

  it('at the edges: leap days, the turn of each field, the ends of the four-digit years, the epoch', () => {
    const edges = [
      '2024-02-29T23:59:59.999Z', '2000-02-29T00:00:00.000Z', '2100-03-01T00:00:00.000Z', '1900-02-28T12:00:00.000Z',
      '1970-01-01T00:00:00.000Z', '1969-12-31T23:59:59.999Z', '1000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z',
      '2026-12-31T23:59:59.009Z', '2027-01-01T00:00:00.090Z',
    ];
    for (const text of edges) {
      const ms = Date.parse(text);
      for (const delta of [-1, 0, 1]) {
        const date = new Date(ms + delta);
        expect(isoTimestamp(date)).toBe(date.toISOString());
      }
    }
    expect(isoTimestamp(new Date(Date.parse('0999-12-31T23:59:59.999Z')))).toBe('0999-12-31T23:59:59.999Z');
    expect(isoTimestamp(new Date(Date.parse('+010000-01-01T00:00:00.000Z')))).toBe('+010000-01-01T00:00:00.000Z');
  });

  it('throws RangeError for an invalid date, as toISOString does', () => {
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});
