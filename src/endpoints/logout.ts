// POST /oauth2/logout: ends the login session of this authorization server.
import type { Request, Response } from 'express';
import type { PageContext } from './page-context.js';
import { isValidCsrfToken } from '../http/csrf.js';
import { clearOAuthSession, readOAuthSession } from '../http/oauth-session.js';
import { hasRouterOwnSession } from '../http/session-middleware.js';
import { sendPage } from '../http/send-page.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { signedOutPageBody } from '../views/signed-out-page.js';
import { renderError } from './render.js';

/**
 * Builds the sign-out handler. With the session's CSRF token (a forged cross-site POST must not sign anybody
 * out), it destroys the router's own session and clears its cookie; in a host's express-session it removes
 * only the router's data, since the host's sign-in is the host's to end. Then it shows the signed-out page
 * (no redirect, so nothing in the request decides where the browser goes). A browser with nothing to end
 * gets that page too. With remembered consent, a signed-in browser would otherwise answer every later
 * authorization request silently, until the session expires.
 * @see RFC 6749 §10.12 (CSRF), RFC 6819 §4.4.1.4, §5.1.5.3 (session lifetime), RFC 9700 §4.11 (open redirectors).
 */
export function createLogoutEndpoint(context: PageContext) {
  const { options } = context;
  const cookieName = options.session.cookieName ?? 'oauth.sid';

  const signedOut = (res: Response): void => sendPage(res, {
    status: 200,
    title: 'Signed out',
    productName: options.productName,
    brandColor: options.brandColor,
    body: signedOutPageBody(options.productName),
  });

  return async function logoutEndpoint(req: Request, res: Response): Promise<void> {
    if (readOAuthSession(req) === undefined) {
      signedOut(res);
      return;
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!isValidCsrfToken(req, body.csrf_token)) {
      renderError(res, context, 403, 'invalid_request', 'The form has expired. Reload the page and try again.');
      return;
    }
    try {
      if (hasRouterOwnSession(req)) {
        await new Promise<void>((resolve, reject) => req.session.destroy((err: unknown) => (err ? reject(err) : resolve())));
        res.clearCookie(cookieName, { path: '/', httpOnly: true, sameSite: 'lax', secure: options.main.secure });
      } else {
        clearOAuthSession(req);
        await new Promise<void>((resolve, reject) => req.session.save((err: unknown) => (err ? reject(err) : resolve())));
      }
      signedOut(res);
    } catch (err) {
      const oauthError = toOAuthError(err, options.logger);
      renderError(res, context, oauthError.status, oauthError.error, 'Signing out is not available right now. Please try again later.');
    }
  };
}
