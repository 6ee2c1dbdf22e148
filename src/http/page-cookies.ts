// The small cookies of the signed-out pages (login form CSRF, host-login mark): names, reading, writing.
import type { Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import { answeredByHost } from './answered-by-host.js';

/** `session.cookieName` when none is given. */
export const DEFAULT_SESSION_COOKIE_NAME = 'oauth.sid';

/** What the cookie is for: the login form's CSRF value, or the note that a browser went to the host login. */
export type PageCookie = 'csrf' | 'host-login';

/**
 * The cookie's name, after the session cookie's (`oauth.sid.csrf`). On an https issuer it carries the
 * `__Host-` prefix: browsers then accept it only Secure, for Path=/ and without Domain, so neither a sibling
 * subdomain nor plain http on the way can plant one (the cookie-injection attacker of the session-fixation
 * review).
 * @see RFC 6265bis §4.1.3.2 (the __Host- prefix), RFC 6819 §4.4.1.4.
 */
export function pageCookieName(options: ResolvedOptions, cookie: PageCookie): string {
  return `${options.main.secure ? '__Host-' : ''}${options.session.cookieName ?? DEFAULT_SESSION_COOKIE_NAME}.${cookie}`;
}

/**
 * The session cookie's name: `session.cookieName` (default `oauth.sid`), `__Host-` prefixed on an https issuer, as
 * the page cookies are, so a sibling subdomain cannot plant a signed-in session of its own (the cookie is Secure,
 * Path=/ and has no Domain, which the prefix requires); a name that already has a `__` prefix is kept as given.
 * @see RFC 6265bis §4.1.3.2, RFC 6819 §4.4.1.4 (session fixation).
 */
export function sessionCookieName(options: ResolvedOptions): string {
  const name = options.session.cookieName ?? DEFAULT_SESSION_COOKIE_NAME;
  return options.main.secure && !name.startsWith('__') ? `__Host-${name}` : name;
}

/** The first value the browser sent for the cookie, or undefined. */
export function readPageCookie(req: Request, options: ResolvedOptions, cookie: PageCookie): string | undefined {
  const name = pageCookieName(options, cookie);
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Sets the cookie: HttpOnly, Path=/, Secure on an https issuer; `maxAgeMs` undefined = until the browser closes. Not
 * once the host has answered (connect-timeout's 503 during a slow store call, answeredByHost): the header would throw.
 */
export function writePageCookie(
  res: Response, options: ResolvedOptions, cookie: PageCookie, value: string, attributes: { sameSite: 'strict' | 'lax'; maxAgeMs?: number },
): void {
  if (answeredByHost(res)) return;
  res.cookie(pageCookieName(options, cookie), value, {
    httpOnly: true,
    secure: options.main.secure,
    path: '/',
    sameSite: attributes.sameSite,
    ...(attributes.maxAgeMs !== undefined ? { maxAge: attributes.maxAgeMs } : {}),
  });
}

/** Removes the cookie, unless the host has answered (as writePageCookie). */
export function clearPageCookie(res: Response, options: ResolvedOptions, cookie: PageCookie): void {
  if (answeredByHost(res)) return;
  res.clearCookie(pageCookieName(options, cookie), { httpOnly: true, secure: options.main.secure, path: '/' });
}
