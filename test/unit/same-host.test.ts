// RFC 9110 §4.2.3: the spellings of one authority that pick the same issuer, and the ones that stay another host.
import { describe, it, expect } from 'vitest';
import { normalizeHost, sameHost } from '../../src/http/same-host.js';

describe('normalizeHost compares authorities as RFC 9110 §4.2.3 normalizes them', () => {
  it('lower-cases, drops the scheme\'s default port (leading zeros too) and a trailing dot', () => {
    expect(normalizeHost('Legacy.Example.COM.:0443', true)).toBe('legacy.example.com');
    expect(normalizeHost('legacy.example.com:80', false)).toBe('legacy.example.com');
  });

  it('keeps another port, and the other scheme\'s default port', () => {
    expect(normalizeHost('legacy.example.com:80', true)).toBe('legacy.example.com:80');
    expect(normalizeHost('legacy.example.com.:8443', true)).toBe('legacy.example.com:8443');
  });

  it('reads an IPv6 literal\'s colons as the address, not a port', () => {
    expect(normalizeHost('[::1]', true)).toBe('[::1]');
    expect(normalizeHost('[::1]:443', true)).toBe('[::1]');
    expect(normalizeHost('[::1]:8443', true)).toBe('[::1]:8443');
  });

  it('matches an issuer configured with a trailing dot or a port to the other spellings', () => {
    expect(sameHost('legacy.example.com.', 'LEGACY.example.com', true)).toBe(true);
    expect(sameHost('legacy.example.com:8443', 'Legacy.Example.Com.:8443', true)).toBe(true);
    expect(sameHost('[::1]:8443', '[::1]:08443', true)).toBe(true);
  });

  it('never makes another host name one of the issuer\'s', () => {
    expect(sameHost('legacy.example.com', 'legacy.example.com.evil', true)).toBe(false);
    expect(sameHost('legacy.example.com', 'auth.example.com@legacy.example.com', true)).toBe(false);
    expect(sameHost('legacy.example.com', 'legacy.example.com..', true)).toBe(false);
    expect(sameHost('legacy.example.com', '', true)).toBe(false);
  });
});
