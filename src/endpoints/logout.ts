// POST /oauth2/logout: ends the login session of this authorization server.
import type { Request, Response } from 'express';
import type { PageContext } from './page-context.js';
import { isValidCsrfToken } from '../http/csrf.js';
import { readOAuthSession } from '../http/oauth-session.js';
import { sendPage } from '../http/send-page.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { signedOutPageBody, stillSignedInPageBody } from '../views/signed-out-page.js';
import { findHostUser } from '../http/current-user.js';
import { hostLogoutUrl } from '../http/host-logout-url.js';
import { renderError, writePageLanguage } from './render.js';
import { endRouterSignIn } from '../http/end-router-sign-in.js';

/**
 * Builds the sign-out handler. With the session's CSRF token (a forged cross-site POST must not sign anybody
 * out), it destroys the router's own session and clears its cookie; in a host's express-session it removes
 * only the router's data, since the host's sign-in is the host's to end. Then it shows the signed-out page, or,
 * when the host still signs the user in (`currentUser`), a page saying so, with the host's sign-out if named
 * (no redirect, so nothing in the request decides where the browser goes). A browser with nothing to end
 * gets that page too. With remembered consent, a signed-in browser would otherwise answer every later
 * authorization request silently, until the session expires.
 * @see RFC 6749 §10.12 (CSRF), RFC 6819 §4.4.1.4, §5.1.5.3 (session lifetime), RFC 9700 §4.11 (open redirectors).
 */
export function createLogoutEndpoint(context: PageContext) {
  const { options } = context;

  const signedOut = (res: Response): void => writePageLanguage(res, context, (language) => sendPage(res, {
    status: 200,
    title: language.messages.signedOutTitle,
    productName: options.productName,
    brandColor: options.brandColor,
    language,
    body: signedOutPageBody(options.productName, language.messages),
  }));

  /** The signed-out page, unless the host still signs the user in (`currentUser`): its sign-in outlives the
   * router's data, so the page says so rather than "signed out". */
  async function answer(req: Request, res: Response): Promise<void> {
    // The host's only: the router's session may be gone by now.
    if (!(await findHostUser(req, context.userAuth))) {
      signedOut(res);
      return;
    }
    const hostSignOut = hostLogoutUrl(req, context.userAuth, options.logger);
    writePageLanguage(res, context, (language) => sendPage(res, {
      status: 200,
      title: language.messages.stillSignedInTitle,
      productName: options.productName,
      brandColor: options.brandColor,
      language,
      body: stillSignedInPageBody(options.productName, hostSignOut, language.messages),
    }));
  }

  return async function logoutEndpoint(req: Request, res: Response): Promise<void> {
    try {
      // A browser with no router data has nothing of the router's to end (and no CSRF token to check).
      if (readOAuthSession(req) !== undefined) {
        const body = (req.body ?? {}) as Record<string, unknown>;
        if (!isValidCsrfToken(req, body.csrf_token)) {
          renderError(res, context, 403, 'invalid_request', { message: 'formExpiredReload' });
          return;
        }
        await endRouterSignIn(req, res, options);
      }
      await answer(req, res);
    } catch (err) {
      const oauthError = toOAuthError(err, options);
      renderError(res, context, oauthError.status, oauthError.error, { message: 'signOutUnavailable' });
    }
  };
}
