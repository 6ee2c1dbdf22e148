// Where the host's own sign-out is, checked before a page links to it.
import type { Request } from 'express';
import type { Logger } from '../options.js';
import type { UserAuth } from '../user-auth.js';

/**
 * `userAuth.logoutUrl(req)` when it is a path of this site (`/…`, not `//…`) or an http(s) URL, else `null`
 * with one error logged: a page must never carry a `javascript:` or other scheme into an `href`, even one the
 * host chose by mistake.
 * @see RFC 9700 §4.11 (no open redirectors: the address comes from the host, never from the request).
 */
export function hostLogoutUrl(req: Request, userAuth: UserAuth, logger: Logger): string | null {
  if (!userAuth.logoutUrl) return null;
  const url: unknown = userAuth.logoutUrl(req);
  if (typeof url === 'string' && /^\/(?![/\\])/.test(url)) return url;
  if (typeof url === 'string' && /^https?:\/\//i.test(url) && URL.canParse(url)) return url;
  logger.error('express-oauth-router: userAuth.logoutUrl must return a path of this site ("/logout") or an http(s) URL; no sign-out link is shown');
  return null;
}
