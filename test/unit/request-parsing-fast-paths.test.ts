// The hand-written fast paths of request parsing give exactly the standard answer: WHATWG form decoding, header names, time prefixes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Request } from 'express';
import { decodeFormBody } from '../../src/http/form-body-encoding.js';
import { singleAuthorizationHeader } from '../../src/http/authorization-header.js';
import { startsWithTimePrefix, timePrefix } from '../../src/crypto/time-prefix.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';

/**
 * WHATWG URL §5.1, as the platform implements it: what decodeFormBody must always answer for UTF-8. The leading
 * `&` is an empty pair the parser skips; it keeps URLSearchParams's constructor from dropping a leading `?`,
 * which §5.1 does not do.
 */
const standard = (body: Buffer): Array<[string, string]> => [...new URLSearchParams(`&${body.toString('utf8')}`)];

/** Characters a form body is made of, the troublesome ones many times over. */
const formChar = fc.constantFrom(
  '&', '=', '+', '%', '%', '%2', '%2B', '%26', '%3D', '%25', '%C3%A9', '%E2%82%AC', '%F0%9F%98%80',
  '%C3', '%C3%28', '%ED%A0%80', '%FF', '%zz', '%0', '%00', '%EF%BB%BF', 'a', 'Z', '0', '-', '.', '_', '~', ' ',
  'é', '€', '😀', '\uFEFF', '\uD800', ';', '/', ':', '?',
);

describe('application/x-www-form-urlencoded bodies (WHATWG URL §5.1, RFC 6749 Appendix B)', () => {
  it('decodes every UTF-8 body exactly as URLSearchParams does, malformed escapes included', () => {
    fc.assert(fc.property(fc.array(formChar, { maxLength: 40 }), (chars) => {
      const body = Buffer.from(chars.join(''));
      expect(decodeFormBody(body, 'utf-8')).toEqual(standard(body));
    }), { numRuns: 5000 });
  });

  it('decodes arbitrary text and bytes exactly as URLSearchParams does', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
      const body = Buffer.from(text);
      expect(decodeFormBody(body, 'utf-8')).toEqual(standard(body));
    }), { numRuns: 2000 });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 60 }), (bytes) => {
      const body = Buffer.from(bytes);
      expect(decodeFormBody(body, 'utf-8')).toEqual(standard(body));
    }), { numRuns: 2000 });
  });

  it('reads the token requests SPEC sends: + is a space, escapes are decoded, empty pairs are skipped', () => {
    const body = Buffer.from('grant_type=authorization_code&&code=a+b%2Bc&redirect_uri=https%3A%2F%2Fclient.example%2Fcb&flag&=x&');
    expect(decodeFormBody(body, 'utf-8')).toEqual([
      ['grant_type', 'authorization_code'], ['code', 'a b+c'], ['redirect_uri', 'https://client.example/cb'], ['flag', ''], ['', 'x'],
    ]);
  });

  it('reads a body of many pairs, with and without =, as the standard parser does', () => {
    for (const text of [`${'a&'.repeat(4000)}x=y`, `${'a=b&'.repeat(2000)}c`, `${'=&'.repeat(3000)}`, `a=${'='.repeat(8000)}`]) {
      const body = Buffer.from(text);
      expect(decodeFormBody(body, 'utf-8')).toEqual(standard(body));
    }
  });

  it('reads a leading ? as part of the first name: a body is not a query string', () => {
    expect(decodeFormBody(Buffer.from('?grant_type=client_credentials&scope=a'), 'utf-8')).toEqual([
      ['?grant_type', 'client_credentials'], ['scope', 'a'],
    ]);
    expect(decodeFormBody(Buffer.from('?grant_type=client_credentials'), 'iso-8859-1')).toEqual([['?grant_type', 'client_credentials']]);
  });

  it('keeps a stray % and writes U+FFFD for escapes that are not UTF-8, as the standard parser does', () => {
    expect(decodeFormBody(Buffer.from('a=100%&b=%C3%28&c=%zz'), 'utf-8')).toEqual([['a', '100%'], ['b', '\uFFFD('], ['c', '%zz']]);
  });
});

describe('the Authorization header (RFC 9110 §5.1: field names are case-insensitive)', () => {
  const requestWith = (rawHeaders: string[]): Request => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i]!.toLowerCase()] ??= rawHeaders[i + 1]!;
    return { rawHeaders, headers } as unknown as Request;
  };

  it('counts the header under any spelling of its name, and only that name', () => {
    for (const name of ['Authorization', 'authorization', 'AUTHORIZATION', 'aUtHoRiZaTiOn']) {
      expect(() => singleAuthorizationHeader(requestWith([name, 'Bearer a', 'Authorization', 'Bearer b']))).toThrow(/more than one/);
    }
    // Names one bit away from a letter of "authorization" (@ is ` without 0x20, [ is {), and non-ASCII look-alikes.
    for (const name of ['Authorizatio@', 'authorizatio[', 'Authorization ', 'Authorizatioñ', 'Proxy-Authorization', 'Authorizatio']) {
      expect(singleAuthorizationHeader(requestWith([name, 'x', 'Authorization', 'Bearer b']))).toBe('Bearer b');
    }
  });

  it('agrees with a lowercase comparison for every header name', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary-ascii', minLength: 13, maxLength: 13 }), (name) => {
      const counted = (() => {
        try {
          singleAuthorizationHeader(requestWith([name, 'x', 'authorization', 'y']));
          return false;
        } catch {
          return true;
        }
      })();
      expect(counted).toBe(name.toLowerCase() === 'authorization');
    }), { numRuns: 3000 });
  });
});

describe('time-prefixed token keys', () => {
  const TIME_PREFIX = /^[0-9a-v]{11}/;

  it('recognises exactly the prefixes timePrefix writes: 11 characters of 0-9 and a-v', () => {
    expect(startsWithTimePrefix(timePrefix())).toBe(true);
    expect(startsWithTimePrefix(`${timePrefix(0)}.x`)).toBe(true);
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom('0', '9', 'a', 'v', 'w', 'A', '/', ':', '`', '.', 'é'), maxLength: 14 }), (value) => {
      expect(startsWithTimePrefix(value)).toBe(TIME_PREFIX.test(value));
    }), { numRuns: 3000 });
  });

  it('keys a time-prefixed token under its prefix, and anything else under its plain hash, as before', () => {
    const token = `${timePrefix()}.${'x'.repeat(43)}`;
    expect(hashToken(token).startsWith(token.slice(0, 11))).toBe(true);
    expect(hashToken(token)).toHaveLength(43);
    for (const other of [`${timePrefix().toUpperCase()}.${'x'.repeat(43)}`, `${timePrefix().slice(0, 10)}w.x`, `${timePrefix()}x`]) {
      expect(hashToken(other)).toBe(hashSecret(other));
    }
  });
});
