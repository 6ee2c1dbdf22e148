// POST /oauth2/consent: Allow issues a code and redirects; Deny redirects with access_denied (RFC 6749 §4.1.2).
import type { Request, Response } from 'express';
import type { PageContext } from './page-context.js';
import { isValidCsrfToken } from '../http/csrf.js';
import { deletePendingRequest, findExpiredPendingRequest, findPendingRequest } from '../http/pending-requests.js';
import { findCurrentUser } from '../http/current-user.js';
import { isSessionOf } from '../http/session-owner.js';
import { errorRedirectUri } from '../http/error-redirect-uri.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { renderError, renderTargetError } from './render.js';
import { issueCodeRedirect } from './issue-code.js';
import { reportErrorAnswer } from '../metrics/channels.js';
import { checkAuthorizationTarget } from '../checks/authorization-request.js';
import { resumeAuthorization } from './resume-authorization.js';

/**
 * Builds the consent handler. The decision is taken only with a valid CSRF token, for a request this session
 * started, by the signed-in user the token and the request were made for (nothing from before a sign-in
 * counts after it), and each pending request is answered once.
 * - allow: a 256-bit code (stored hashed, single use, bound to client, user, redirect_uri, PKCE challenge
 *   and issuer, living `authorizationCodeTtl` seconds) → 302 to redirect_uri with `code`, `state`, `iss`;
 * - deny: 302 with `error=access_denied`;
 * - a form open longer than its pending request lives (ten minutes), or whose session ended meanwhile (its CSRF
 *   token no longer matches): 303 to the authorization endpoint with the request's validated query, so it is asked
 *   again with every check re-run rather than refused (WCAG 2.2.1).
 * Either answer first checks the integration again as GET /oauth2/authorize did (it exists, is enabled, belongs
 * to this base address and still registers the redirect_uri): one disabled or deleted while the page was open
 * gets the error page, so no code, consent or redirect goes to it.
 * An approval is reported as `consent.granted` (a remembered consent skips this page and is not reported again).
 * @see RFC 6749 §4.1.2, §4.1.2.1, §10.5, §10.12; RFC 9207; SPEC §4.1.
 */
export function createConsentEndpoint(context: PageContext) {
  const { userAuth, options, issuer } = context;

  return async function consentEndpoint(req: Request, res: Response): Promise<void> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!isValidCsrfToken(req, body.csrf_token)) {
      // The session ended while the page was open (idle timeout, sign-out in another tab): asked again from the
      // start, every check re-run, rather than refused (WCAG 2.2.1). A forged POST gets only the redirect a link to
      // the authorization endpoint would give; nothing it carries is decided on.
      let restart: string | null;
      try {
        restart = (await resumeAuthorization(context, body.resume))?.pending.query ?? null;
      } catch (err) {
        renderTargetError(res, context, err, 'This page is not available right now. Please try again later.');
        return;
      }
      if (restart !== null) res.redirect(303, `${context.paths.authorize}?${restart}`);
      else renderError(res, context, 403, 'invalid_request', 'The form has expired. Go back to the application and start again.');
      return;
    }
    const requestId = typeof body.request_id === 'string' ? body.request_id : '';
    const pending = findPendingRequest(req, requestId);
    const expired = pending ? null : findExpiredPendingRequest(req, requestId);
    if (expired && expired.issuer === issuer.issuer) {
      // Open longer than a pending request lives: asked again from the start (every check re-run), not refused.
      deletePendingRequest(req, requestId);
      res.redirect(303, `${context.paths.authorize}?${expired.query}`);
      return;
    }
    if (!pending || pending.issuer !== issuer.issuer) {
      renderError(res, context, 400, 'invalid_request', 'This authorization request has expired. Go back to the application and start again.');
      return;
    }
    const decision = body.decision;
    if (decision !== 'allow' && decision !== 'deny') {
      renderError(res, context, 400, 'invalid_request', 'Choose Allow or Deny.');
      return;
    }
    try {
      const user = await findCurrentUser(req, userAuth, options);
      if (!user) {
        renderError(res, context, 401, 'access_denied', 'You are no longer signed in. Go back to the application and start again.');
        return;
      }
      // Made for somebody else, or before the host's login signed this user in: a planted form.
      if (!isSessionOf(req, user)) {
        renderError(res, context, 403, 'invalid_request', 'The form has expired. Go back to the application and start again.');
        return;
      }
      deletePendingRequest(req, requestId);
      try {
        await checkAuthorizationTarget(context.store, options, issuer, new URLSearchParams(pending.query));
      } catch (err) {
        renderTargetError(res, context, err, 'This page is not available right now. Please try again later.');
        return;
      }
      if (decision === 'deny') {
        reportErrorAnswer(options.events, 'authorization', 'access_denied', 302);
        res.redirect(302, errorRedirectUri(pending.redirectUri, {
          error: 'access_denied', description: 'the user denied the request', state: pending.state, issuer: issuer.issuer,
        }));
        return;
      }
      const callback = await issueCodeRedirect(context, pending, user);
      options.events.publish({
        type: 'consent.granted', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null,
        userId: user.id, clientId: pending.clientId, scope: pending.scope,
      });
      res.redirect(302, callback);
    } catch (err) {
      const oauthError = toOAuthError(err, options.logger);
      // The redirect_uri is trusted here, so RFC 6749 §4.1.2.1 server_error / temporarily_unavailable apply.
      reportErrorAnswer(options.events, 'authorization', oauthError.error, 302);
      res.redirect(302, errorRedirectUri(pending.redirectUri, { error: oauthError.error, state: pending.state, issuer: issuer.issuer }));
    }
  };
}
