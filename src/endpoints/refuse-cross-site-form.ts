// Refuses a page form that a browser says was sent from another origin, before anything reads it (defence in depth).
import type { NextFunction, Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import type { PageContext } from './page-context.js';
import { renderError } from './render.js';

/**
 * A POST to a page (sign-in, consent, withdraw, sign-out) whose `Sec-Fetch-Site` is `cross-site` or `same-site` is
 * answered 403 before its body is read: the router's forms are only ever sent from its own pages, so from the same
 * origin, and the browser sets the header itself (a page cannot forge it). `same-site` counts too: another port or
 * subdomain of the issuer's site is another origin, whose POSTs SameSite=Lax cookies do not stop, and on an http
 * issuer (no `__Host-` prefix) such a page can plant the login form's double-submit cookie with a value it knows,
 * then post the form: an outside review signed a Chromium in to its own account that way (login CSRF). The CSRF
 * tokens and SameSite cookies already refuse a cross-site form; this refuses both even where they would not be in
 * force (a planted cookie, an old session cookie, a host's own session settings). A request without the header
 * (older browsers, scripts) is judged by the CSRF token as before.
 * @see RFC 6749 §10.12 (CSRF), RFC 6819 §4.4.1.4, W3C Fetch Metadata Request Headers §2.4 (Sec-Fetch-Site).
 */
export function createRefuseCrossSiteForm(options: ResolvedOptions) {
  const context = { options } as PageContext;
  return function refuseCrossSiteForm(req: Request, res: Response, next: NextFunction): void {
    const site = req.headers['sec-fetch-site'];
    if (site !== 'cross-site' && site !== 'same-site') {
      next();
      return;
    }
    renderError(res, context, 403, 'invalid_request', { message: 'crossSiteForm' });
  };
}
