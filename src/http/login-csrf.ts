// Stateless CSRF protection of the login form: a double-submit cookie, so a signed-out visit stores nothing.
import type { Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import { createRandomToken } from '../crypto/random-token.js';
import { constantEquals } from '../crypto/constant-equals.js';
import { readPageCookie, writePageCookie } from './page-cookies.js';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The login form's CSRF token: a 256-bit random value in an HttpOnly, SameSite=Lax cookie, repeated in a
 * hidden field. A forged cross-site POST carries neither the cookie (SameSite=Lax withholds it from cross-site
 * POSTs) nor the value (the attacker cannot read it), so it cannot sign a victim in to the attacker's account
 * (login CSRF, RFC 6749 §10.12). The server keeps nothing: an anonymous flood of authorization requests leaves no
 * session behind. The value is reused while the browser keeps it, so several tabs' login forms stay valid: Lax,
 * not Strict, because an authorization request is a cross-site navigation, which a Strict cookie does not come
 * with, so each new tab minted a new value and left the earlier tabs' forms refused. On an https issuer the cookie is
 * `__Host-` prefixed, which keeps a sibling subdomain from planting a value it knows.
 * @see RFC 6749 §10.12, RFC 6819 §4.4.1.4, OWASP CSRF Prevention ("double submit cookie").
 */
export function loginCsrfToken(req: Request, res: Response, options: ResolvedOptions): string {
  const current = readPageCookie(req, options, 'csrf');
  if (current !== undefined && TOKEN.test(current)) return current;
  const token = createRandomToken();
  writePageCookie(res, options, 'csrf', token, { sameSite: 'lax' });
  return token;
}

/** True when the form's token equals the cookie's, compared in constant time. */
export function isValidLoginCsrf(req: Request, options: ResolvedOptions, submitted: unknown): boolean {
  const expected = readPageCookie(req, options, 'csrf');
  return typeof submitted === 'string' && expected !== undefined && TOKEN.test(expected) && constantEquals(submitted, expected);
}
