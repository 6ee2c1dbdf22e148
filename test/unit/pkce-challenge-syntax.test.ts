// An S256 code_challenge is accepted exactly when it is the base64url of some SHA-256 (RFC 7636 §4.2, RFC 4648 §5).
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkCodeChallenge } from '../../src/checks/pkce.js';

const accepts = (challenge: string): boolean => {
  try {
    return checkCodeChallenge(challenge, 'S256', true) === challenge;
  } catch {
    return false;
  }
};

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('checkCodeChallenge with S256', () => {
  it('accepts the challenge of any verifier (BASE64URL-ENCODE(SHA256(ASCII(code_verifier))), RFC 7636 §4.2)', () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9\-._~]{43,128}$/), (verifier) => {
      expect(accepts(createHash('sha256').update(verifier, 'ascii').digest('base64url'))).toBe(true);
    }), { numRuns: 5_000 });
  });

  it('accepts a 43-letter base64url string exactly when it decodes to 32 bytes that encode back to it', () => {
    // RFC 4648 §3.5: the pad bits of the last letter are zero in a canonical encoding. A string that does not
    // round-trip names no digest, so no verifier could match it.
    const letter = fc.constantFrom(...BASE64URL);
    fc.assert(fc.property(fc.array(letter, { minLength: 43, maxLength: 43 }), (letters) => {
      const challenge = letters.join('');
      const roundTrips = Buffer.from(challenge, 'base64url').toString('base64url') === challenge;
      expect(accepts(challenge)).toBe(roundTrips);
    }), { numRuns: 20_000 });
  });

  it('refuses each of the 48 last letters that set a pad bit, and accepts the 16 that do not', () => {
    const stem = createHash('sha256').update('a'.repeat(43)).digest('base64url').slice(0, 42);
    const accepted = [...BASE64URL].filter((last) => accepts(`${stem}${last}`));
    expect(accepted.join('')).toBe('AEIMQUYcgkosw048');
  });
});
