// GET /oauth2/authorize: validate the request, then show login or consent (SPEC §4.1, RFC 6749 §4.1.1).
import type { Request, Response } from 'express';
import type { PageContext } from './page-context.js';
import { checkAuthorizationParameters, checkAuthorizationTarget } from '../checks/authorization-request.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { findCurrentUser } from '../http/current-user.js';
import { deletePendingRequest, savePendingRequest } from '../http/pending-requests.js';
import { issueCodeRedirect } from './issue-code.js';
import { redirectUriWithParams } from '../http/redirect-uri-with-params.js';
import { renderConsent, renderError, renderLogin } from './render.js';
import { markSentToHostLogin, takeHostLoginMark } from '../http/host-login-mark.js';
import { renderHostLoginLoop } from './host-login-loop.js';
import { consentCovers } from '../checks/grant-scope.js';

/**
 * The authorization endpoint of one base address.
 * 1. client_id and redirect_uri: on failure an error page, never a redirect (RFC 6749 §4.1.2.1);
 * 2. the other parameters: on failure a redirect with `error`, `error_description`, `state` and `iss`;
 * 3. nobody signed in: the login page (or the host's login URL, but not twice in a row for one request: see
 *    renderHostLoginLoop); signed in: the consent page.
 * @see RFC 6749 §4.1.1, §4.1.2.1, RFC 9207, SPEC §4.1.
 */
export function createAuthorizeEndpoint(context: PageContext) {
  const { store, userAuth, options, issuer } = context;

  return async function authorizeEndpoint(req: Request, res: Response): Promise<void> {
    // Taken before the integration or the consent is read: the issuedAt of the code this request leads to.
    const startedAt = Date.now();
    const query = new URL(req.originalUrl, 'http://localhost').searchParams;
    let target;
    try {
      target = await checkAuthorizationTarget(store, options, issuer, query);
    } catch (err) {
      const oauthError = toOAuthError(err, options.logger);
      const description = oauthError.expose ? oauthError.message : 'the server encountered an unexpected condition';
      renderError(res, context, oauthError.status, oauthError.error, description);
      return;
    }
    try {
      const pending = checkAuthorizationParameters(options, issuer, target, query, startedAt);
      const user = await findCurrentUser(req, userAuth);
      const backFromHostLogin = userAuth.loginUrl && !userAuth.verifyCredentials ? takeHostLoginMark(req, pending.query) : false;
      const requestId = savePendingRequest(req, pending);
      if (!user) {
        if (userAuth.loginUrl && !userAuth.verifyCredentials) {
          // Back from the host's login for this very request and still signed out: sending it there again
          // would loop for ever (typically oauth.router mounted before the host's session and passport).
          if (backFromHostLogin) {
            renderHostLoginLoop(req, res, context);
            return;
          }
          markSentToHostLogin(req, pending.query);
          res.redirect(303, userAuth.loginUrl(req, `${context.paths.authorize}?${pending.query}`));
          return;
        }
        renderLogin(req, res, context, { requestId, clientName: target.client.name, error: null, username: '', redirectUri: target.redirectUri });
        return;
      }
      // A returning user who already approved this integration for (at least) these scopes is not asked again,
      // unless the client asks for the consent page with prompt=consent. A read-only approval never stands in
      // for an all-access request.
      if (options.rememberConsent && store.consents && query.get('prompt') !== 'consent') {
        const consent = await store.consents.findConsent(user.id, target.client.clientId);
        if (consent && consentCovers(consent.scope, pending.scope, options)) {
          deletePendingRequest(req, requestId);
          res.redirect(302, await issueCodeRedirect(context, pending, user));
          return;
        }
      }
      renderConsent(req, res, context, { requestId, client: target.client, pending, user });
    } catch (err) {
      const oauthError = toOAuthError(err, options.logger);
      res.redirect(302, redirectUriWithParams(target.redirectUri, [
        ['error', oauthError.error],
        ['error_description', oauthError.expose ? oauthError.message : undefined],
        ['state', target.state],
        ['iss', issuer.issuer],
      ]));
    }
  };
}
