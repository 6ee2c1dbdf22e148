// Answers a wrong HTTP method on a page route (a browser reloading a form's address) with a 405 page, not Express's bare 404.
import type { Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import type { PageContext } from './page-context.js';
import { renderError } from './render.js';

/**
 * A handler for the methods a page route does not take: 405 with `Allow` (RFC 9110 §15.5.6) on the styled error
 * page, with the page headers (`no-store`, framing refused) applied before it. A user gets here by pressing Enter in
 * the address bar after a sign-in form was posted, so the page says where to go instead. The authorization endpoint
 * allows GET alone: its GET may issue a code (a remembered consent, `prompt=none`), which a HEAD, a safe method
 * (RFC 9110 §9.2.1) that link checkers and prefetchers send unasked, must not do.
 * @see RFC 9110 §15.5.6, §10.2.1 (Allow).
 */
export function createPageMethodNotAllowed(options: ResolvedOptions, allowed: 'GET' | 'GET, HEAD' | 'POST') {
  const context = { options } as PageContext;
  const description = { message: allowed !== 'POST' ? 'openedByLink' : 'formCannotBeOpened' } as const;
  return function pageMethodNotAllowed(_req: Request, res: Response): void {
    res.setHeader('Allow', allowed);
    renderError(res, context, 405, 'invalid_request', description);
  };
}
