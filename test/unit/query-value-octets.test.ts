// A query parameter's octets, for echoing a state that is not UTF-8: the exact octets sent, in work that the other parameters' lengths do not set.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { queryValueOctets } from '../../src/http/query-value-octets.js';

/** The reading RFC 6749 §4.1.2.1 needs, spelt out one character at a time: the oracle the function must agree with. */
function reference(rawQuery: string, name: string): string | undefined {
  const octets = (raw: string): Buffer => {
    const bytes: number[] = [];
    for (let i = 0; i < raw.length; i++) {
      const char = raw[i]!;
      if (char === '+') bytes.push(0x20);
      else if (char === '%' && /^[0-9A-Fa-f]{2}$/.test(raw.slice(i + 1, i + 3))) {
        bytes.push(parseInt(raw.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes.push(...Buffer.from(char));
    }
    return Buffer.from(bytes);
  };
  for (const pair of rawQuery.split('&')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || !octets(pair.slice(0, equals)).equals(Buffer.from(name))) continue;
    const value = octets(pair.slice(equals + 1));
    if (value.length === 0) continue;
    let encoded = '';
    for (const byte of value) {
      const unreserved = /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte));
      encoded += unreserved ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
    return encoded;
  }
  return undefined;
}

const queryChar = fc.constantFrom(
  '&', '=', '+', '%', '%F', '%FF', '%ff', '%E9', '%C3%A9', '%zz', '%73', '%74', 'state', 's', 't', 'a', 'e', 'Z', '~',
  '-', '.', '_', ' ', 'é', '😀', '\uD800', '/', '?',
);

describe('the octets of a query parameter (RFC 6749 §4.1.2.1: "the exact value received")', () => {
  afterEach(() => { vi.restoreAllMocks(); });

  it('reads every query as the character-by-character reading does, escapes, pluses and percent-encoded names included', () => {
    fc.assert(fc.property(fc.array(queryChar, { maxLength: 40 }), (chars) => {
      const query = chars.join('');
      expect(queryValueOctets(query, 'state')).toBe(reference(query, 'state'));
    }), { numRuns: 5000 });
    expect(queryValueOctets('%73t%61te=caf%E9&state=x', 'state')).toBe('caf%E9');
    expect(queryValueOctets('state=&state=a+b%e9', 'state')).toBe('a%20b%E9');
  });

  it('does work that the length of the other parameters\' names does not set (a 15,000-character name before state)', () => {
    // Steps counted as the buffers made: one per octet string, never one per character of input that cannot be the name.
    const buffersFor = (query: string): number => {
      const from = vi.spyOn(Buffer, 'from');
      try {
        expect(queryValueOctets(query, 'state')).toBe('ab%FF');
        return from.mock.calls.length;
      } finally {
        from.mockRestore();
      }
    };
    const short = buffersFor('x=1&%25=1&state=ab%FF');
    expect(buffersFor(`${'x'.repeat(15_000)}=1&${'%'.repeat(15_000)}=1&state=ab%FF`)).toBeLessThanOrEqual(short);
  });

  it('does work that the length of the state\'s own ASCII characters does not set', () => {
    const from = vi.spyOn(Buffer, 'from');
    const state = `${'a'.repeat(2_000)}%FF`;
    expect(queryValueOctets(`state=${state}`, 'state')).toBe(state);
    expect(from.mock.calls.length).toBeLessThan(10);
  });
});
