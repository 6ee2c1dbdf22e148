// OpenID Connect Core §3.1.2.1 prompt=login and max_age: when the router's sign-in counts as fresh, and how max_age is read.
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { maxAgeOf, needsSignInAgain, takeSignInFor } from '../../src/http/reauthentication.js';
import { oauthSession, readOAuthSession } from '../../src/http/oauth-session.js';

/** A request with a session, as express-session leaves one. */
function withSession(): Request {
  return { session: {} } as unknown as Request;
}

describe('the mark of a sign-in made for a request', () => {
  const query = 'response_type=code&client_id=c&redirect_uri=https%3A%2F%2Fa.example%2Fcb&prompt=login';

  it('answers that request once, within a minute of the sign-in', () => {
    const req = withSession();
    oauthSession(req).signedInFor = { query, at: 1_000_000 };
    expect(takeSignInFor(req, query, 1_000_000 + 59_999)).toBe(true);
    expect(takeSignInFor(req, query, 1_000_000 + 60_000)).toBe(false);
  });

  it('a mark a minute old or more (a 303 back never followed) counts for nothing, and is taken anyway', () => {
    const req = withSession();
    oauthSession(req).signedInFor = { query, at: 1_000_000 };
    expect(takeSignInFor(req, query, 1_000_000 + 60_000)).toBe(false);
    expect(readOAuthSession(req)?.signedInFor).toBeUndefined();
  });

  it('another request takes it too, without it counting: a later copy of the first cannot use it', () => {
    const req = withSession();
    oauthSession(req).signedInFor = { query, at: 1_000_000 };
    expect(takeSignInFor(req, `${query}&state=other`, 1_000_001)).toBe(false);
    expect(takeSignInFor(req, query, 1_000_002)).toBe(false);
  });

  it('a mark from the future (a clock set back) does not count', () => {
    const req = withSession();
    oauthSession(req).signedInFor = { query, at: 2_000_000 };
    expect(takeSignInFor(req, query, 1_000_000)).toBe(false);
  });

  it('prompt=login needs the mark; max_age compares the sign-in time, and the mark stands for it', () => {
    const req = withSession();
    oauthSession(req).signedInAt = 1_000_000;
    expect(needsSignInAgain(req, ['login'], undefined, false, 1_000_001)).toBe(true);
    expect(needsSignInAgain(req, ['login'], undefined, true, 1_000_001)).toBe(false);
    expect(needsSignInAgain(req, [], 60, false, 1_000_000 + 60_000)).toBe(false);
    expect(needsSignInAgain(req, [], 60, false, 1_000_000 + 60_001)).toBe(true);
    expect(needsSignInAgain(req, [], 0, true, 1_000_500)).toBe(false);
    expect(needsSignInAgain(req, ['consent'], undefined, false, 9_999_999)).toBe(false);
  });
});

describe('max_age', () => {
  const read = (search: string) => maxAgeOf(new URLSearchParams(search));

  it('is a non-negative number of seconds, at most 10 digits, leading zeros allowed', () => {
    expect(read('max_age=0')).toBe(0);
    expect(read('max_age=007')).toBe(7);
    expect(read('max_age=9999999999')).toBe(9_999_999_999);
    expect(read('')).toBeUndefined();
  });

  it('sent without a value is omitted (RFC 6749 §3.1), also beside a value', () => {
    expect(read('max_age=')).toBeUndefined();
    expect(read('max_age=&max_age=60')).toBe(60);
  });

  it.each(['-1', '+5', ' 5', '5 ', '1.5', '1e3', '0x10', '99999999999', '５'])('max_age=%j is invalid_request', (value) => {
    expect(() => read(`max_age=${encodeURIComponent(value)}`)).toThrow(expect.objectContaining({ error: 'invalid_request' }));
  });

  it('two values are invalid_request', () => {
    expect(() => read('max_age=60&max_age=0')).toThrow(expect.objectContaining({ error: 'invalid_request' }));
  });
});
