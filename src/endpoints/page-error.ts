// The error handler of the HTML routes: what a body parser, a session store or a handler threw, as a page.
import type { NextFunction, Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import type { PageContext } from './page-context.js';
import { UnreadableBodyError } from '../errors.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { renderError } from './render.js';
import { drainRefusedBody } from '../http/drain-refused-body.js';
import type { PageErrorMessage } from '../views/page-messages.js';

const UNREADABLE: Record<UnreadableBodyError['pageStatus'], PageErrorMessage> = {
  408: 'formTooSlow',
  413: 'formTooLarge',
  415: 'formEncodingUnsupported',
  501: 'formEncodingUnsupported',
};

/**
 * Renders a thrown error as a page, never a stack trace: an unreadable form with its RFC 9110 status (408, 413,
 * 415, 501; the connection is then closed, once the rest of a 413 or 415 body has been read off, bounded), any
 * other request error as 400,
 * a store outage as 503 and anything else as 500 (logged by toOAuthError).
 * @see RFC 9110 §15.5.9 ("the server … wishes to close the connection"), §15.5.14, §15.5.16, §15.6.2; RFC 9112 §6.1;
 * RFC 6749 §4.1.2.1.
 */
export function createPageErrorHandler(options: ResolvedOptions) {
  const context = { options } as PageContext;
  return function pageError(err: unknown, req: Request, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(err);
    const oauthError = toOAuthError(err, options);
    if (oauthError instanceof UnreadableBodyError) {
      // The rest of a refused body is not worth draining to keep the connection, but a bounded read of it before the
      // answer keeps the close from being a reset that a proxy still sending it would answer with 502.
      res.setHeader('Connection', 'close');
      const send = (): void => renderError(res, context, oauthError.pageStatus, oauthError.error, { message: UNREADABLE[oauthError.pageStatus] });
      if (oauthError.pageStatus === 413 || oauthError.pageStatus === 415) drainRefusedBody(req, send);
      else send();
      return;
    }
    const failed = oauthError.status >= 500;
    renderError(res, context, failed ? oauthError.status : 400, oauthError.error,
      { message: failed ? 'serviceUnavailable' : 'requestUnreadable' });
  };
}
