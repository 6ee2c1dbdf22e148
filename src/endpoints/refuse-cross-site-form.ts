// Refuses a page form that a browser says was sent from another site, before anything reads it (defence in depth).
import type { NextFunction, Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import type { PageContext } from './page-context.js';
import { renderError } from './render.js';

/**
 * A POST to a page (sign-in, consent, withdraw, sign-out) whose `Sec-Fetch-Site` is `cross-site` is answered 403
 * before its body is read: the router's forms are only ever sent from its own pages, and the browser sets the header
 * itself (a page cannot forge it). The CSRF tokens and SameSite cookies already refuse such a form; this refuses it
 * even where they would not be in force (an old session cookie, a host's own session settings). A request without
 * the header (older browsers, scripts) is judged by the CSRF token as before.
 * @see RFC 6749 §10.12 (CSRF), W3C Fetch Metadata Request Headers §2.4 (Sec-Fetch-Site).
 */
export function createRefuseCrossSiteForm(options: ResolvedOptions) {
  const context = { options } as PageContext;
  return function refuseCrossSiteForm(req: Request, res: Response, next: NextFunction): void {
    if (req.headers['sec-fetch-site'] !== 'cross-site') {
      next();
      return;
    }
    renderError(res, context, 403, 'invalid_request', 'This form was sent from another site. Go back to the application and start again.');
  };
}
