// Options are validated once, at start-up, with messages that name the bad key.
import { describe, expect, it } from 'vitest';
import { resolveOptions, OptionsError } from '../../src/options.js';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { contrastWithWhite } from '../../src/views/contrast-with-white.js';

const userAuth = { verifyCredentials: async () => null };

describe('createOAuthRouter options', () => {
  it('refuses a call without options (two arguments, from plain JavaScript), showing the call with its third argument', () => {
    const twoArguments = createOAuthRouter as unknown as (store: unknown, auth: unknown) => unknown;
    expect(() => twoArguments(createMemoryStore(), userAuth)).toThrow(new OptionsError('options',
      "must be an object, the third argument: createOAuthRouter(store, userAuth, { issuer: 'https://…' })"));
  });

  it('applies the defaults: 3600 s access tokens, 2021-01-15 cutoff, PKCE optional', () => {
    const o = resolveOptions({ issuer: 'https://auth.example.com/', legacy: { issuer: 'https://legacy.example.com' } });
    expect(o.main.issuer).toBe('https://auth.example.com');
    expect(o.accessTokenTtl).toBe(3600);
    expect(o.legacyCutoff.toISOString()).toBe('2021-01-15T00:00:00.000Z');
    expect(o.requirePkce).toBe(false);
    expect(o.authorizationCodeTtl).toBeLessThanOrEqual(600);
    expect(o.bodyTimeout).toBe(10);
  });

  it.each([
    [{ issuer: 'not a url' }, 'issuer'],
    [{ issuer: 'ftp://x' }, 'issuer'],
    [{ issuer: 'https://x?y=1' }, 'issuer'],
    [{ issuer: 'https://x//auth' }, 'issuer'],
    [{ issuer: 'https://x/\\evil.example' }, 'issuer'],
    [{ issuer: 'https://x', legacy: { issuer: 'https://y//legacy' } }, 'legacy.issuer'],
    [{ issuer: 'https://x', accessTokenTtl: 0 }, 'accessTokenTtl'],
    [{ issuer: 'https://x', accessTokenTtl: '3600' }, 'accessTokenTtl'],
    [{ issuer: 'https://x', authorizationCodeTtl: 601 }, 'authorizationCodeTtl'],
    [{ issuer: 'https://x', bodyTimeout: 0 }, 'bodyTimeout'],
    [{ issuer: 'https://x', bodyTimeout: 301 }, 'bodyTimeout'],
    [{ issuer: 'https://x', legacy: { issuer: 'https://x' } }, 'legacy.issuer'],
    [{ issuer: 'https://x', legacy: { issuer: 'https://y', credentialsIssuedBefore: 'someday' } }, 'legacy.credentialsIssuedBefore'],
    [{ issuer: 'https://x', session: { secret: 'short' } }, 'session.secret'],
    [{ issuer: 'https://x', rateLimitKeySecret: 'short' }, 'rateLimitKeySecret'],
    [{ issuer: 'https://x', rateLimitKeySecret: ['rate-limit-key-secret-0123456789'] }, 'rateLimitKeySecret'],
    [{ issuer: 'https://x', requirePkce: 'yes' }, 'requirePkce'],
    [{ issuer: 'https://x', realm: 'a"b' }, 'realm'],
    [{ issuer: 'https://x', accessTokenTTL: 60 }, 'accessTokenTTL'],
    [{ issuer: 'https://x', session: { idelTtl: 60 } }, 'session.idelTtl'],
    [{ issuer: 'https://x', legacy: { issuer: 'https://y', credentialsIssuedBefor: '2022-01-01' } }, 'legacy.credentialsIssuedBefor'],
    [{ issuer: 'https://x', accessTokenTtl: 1e13 }, 'accessTokenTtl'],
    [{ issuer: 'https://x', refreshTokenTtl: 10 * 365 * 24 * 3600 + 1 }, 'refreshTokenTtl'],
    [{ issuer: 'https://x', session: { absoluteTtl: 9e12 } }, 'session.absoluteTtl'],
    [{ issuer: 'https://x', brandColor: '#ffeb3b' }, 'brandColor'],
    [{ issuer: 'https://x', brandColor: '#2196f3' }, 'brandColor'],
  ])('rejects %j naming %s', (options, key) => {
    expect(() => resolveOptions(options as never)).toThrow(OptionsError);
    expect(() => resolveOptions(options as never)).toThrow(`"${key}"`);
  });

  it('refuses an issuer path starting with "//": the router redirects to its own paths by relative reference, which would then name another host (RFC 3986 §4.2)', () => {
    // A base URL with a trailing slash joined to a path: the sign-in's 303 to the authorization request would leave for host `auth`.
    expect(new URL('//auth/oauth2/authorize?client_id=a', 'https://x.example/oauth2/login').host).toBe('auth');
    expect(() => resolveOptions({ issuer: 'https://x.example//auth' })).toThrow(/must not have a path starting with "\/\/"/);
    // A trailing slash alone, or an empty segment further on, keeps the paths on this host: still taken.
    expect(resolveOptions({ issuer: 'https://x.example//' }).main.issuer).toBe('https://x.example');
    expect(resolveOptions({ issuer: 'https://x.example/a//b' }).main.pathPrefix).toBe('/a//b');
  });

  it('takes lifetimes up to ten years, which every store and a JWT exp can hold', () => {
    const tenYears = 10 * 365 * 24 * 3600;
    expect(resolveOptions({ issuer: 'https://x', accessTokenTtl: tenYears, refreshTokenTtl: tenYears }).refreshTokenTtl).toBe(tenYears);
  });

  it('takes a brandColor the pages can write white on, 4.5:1 or more (WCAG 1.4.3), and says the contrast of one they cannot', () => {
    expect(resolveOptions({ issuer: 'https://x', brandColor: '#1f4fd1' }).brandColor).toBe('#1f4fd1');
    expect(resolveOptions({ issuer: 'https://x', brandColor: '#767676' }).brandColor).toBe('#767676');
    expect(() => resolveOptions({ issuer: 'https://x', brandColor: '#ffeb3b' })).toThrow('has a contrast of 1.22:1 with white');
    expect(contrastWithWhite('#ffffff')).toBe(1);
    expect(contrastWithWhite('#000000')).toBe(21);
    expect(contrastWithWhite('#2196f3')).toBeCloseTo(3.12, 2);
  });

  it('suggests the right key for a likely typo', () => {
    expect(() => resolveOptions({ issuer: 'https://x', accessTokenTTL: 60 } as never)).toThrow('did you mean "accessTokenTtl"');
  });

  it('fails at start-up for a store that lacks a method, naming it', () => {
    const store = createMemoryStore();
    const broken = { ...store, codes: { saveCode: store.codes.saveCode } };
    expect(() => createOAuthRouter(broken as never, userAuth, { issuer: 'https://x' })).toThrow('store.codes.consumeCode');
  });

  it('fails at start-up for a userAuth that cannot sign anybody in', () => {
    expect(() => createOAuthRouter(createMemoryStore(), {}, { issuer: 'https://x' })).toThrow('verifyCredentials');
  });
});
