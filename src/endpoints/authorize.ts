// GET /oauth2/authorize: validate the request, then show login or consent (SPEC §4.1, RFC 6749 §4.1.1).
import type { Request, Response } from 'express';
import type { PageContext } from './page-context.js';
import { checkAuthorizationParameters, checkAuthorizationTarget } from '../checks/authorization-request.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { findSignIn } from '../http/current-user.js';
import { savePendingRequest } from '../http/pending-requests.js';
import { bindSessionToUser } from '../http/session-owner.js';
import { encodeLoginRequest } from '../http/login-request.js';
import { issueCodeRedirect } from './issue-code.js';
import { errorRedirectUri } from '../http/error-redirect-uri.js';
import { errorResponseMode } from '../checks/error-response-mode.js';
import { renderConsent, renderDenyAgain, renderLogin, renderTargetError } from './render.js';
import { markSentToHostLogin, takeHostLoginMark } from '../http/host-login-mark.js';
import { renderHostLoginLoop } from './host-login-loop.js';
import { consentCovers } from '../checks/grant-scope.js';
import { isConsentCurrent } from '../checks/consent-current.js';
import { reportErrorAnswer } from '../metrics/channels.js';
import { InteractionRequiredError, InvalidRequestError } from '../errors.js';
import { maxAgeOf, needsSignInAgain, takeSignInFor } from '../http/reauthentication.js';
import { takeExpiredConsentNotice } from '../http/expired-consent-notice.js';
import { redirect } from '../http/answered-by-host.js';

/** The request's prompt values (sent once: checked before), space-delimited. */
function promptValues(query: URLSearchParams): readonly string[] {
  const prompt = query.getAll('prompt').find((value) => value !== '');
  return prompt === undefined ? [] : prompt.split(' ').filter((value) => value !== '');
}

/**
 * The authorization endpoint of one base address.
 * 1. client_id and redirect_uri: on failure an error page, never a redirect (RFC 6749 §4.1.2.1);
 * 2. the other parameters: on failure a redirect with `error`, `error_description`, `state` and `iss`, in the query,
 *    or in the fragment for a `response_type` holding `token` or `id_token` (errorResponseMode, RFC 6749 §4.2.2.1);
 * 3. nobody signed in: the login page (or the host's login URL, but not twice in a row for one request: see
 *    renderHostLoginLoop), which carries the request itself, so a signed-out browser gets no server-side
 *    session; signed in: the consent page, its request kept in the user's session. With `prompt=none`, no page:
 *    a code when the user is signed in and a remembered consent covers the request, else a redirect with
 *    `login_required` or `consent_required` (OpenID Connect Core §3.1.2.1, §3.1.2.6). `prompt=login`, or a
 *    router sign-in older than `max_age` seconds, shows the login page again, and a sign-in made there for this
 *    request satisfies it; where only the host's login could sign the user in again, whose time the router cannot
 *    tell, either is `login_required` (§3.1.2.1), except after a click on an expired consent page (the notice's mark):
 *    that user gets a page saying so, whose Deny returns to the integration.
 * @see RFC 6749 §4.1.1, §4.1.2.1, RFC 9207, SPEC §4.1.
 */
export function createAuthorizeEndpoint(context: PageContext) {
  const { store, userAuth, options, issuer } = context;

  return async function authorizeEndpoint(req: Request, res: Response): Promise<void> {
    // Taken before the integration or the consent is read: the issuedAt of the code this request leads to.
    const startedAt = Date.now();
    // The query alone: a request line in absolute form (`GET http://host:99999/oauth2/authorize?…`, RFC 9112 §3.2.2)
    // names an authority this server need not parse, and one URL cannot parse must not make a 500 out of the request.
    const at = req.originalUrl.indexOf('?');
    // An Allow from an expired consent page sent back here: its notice is shown, and the mark is no part of the request.
    const { query: search, notice } = takeExpiredConsentNotice(at === -1 ? '' : req.originalUrl.slice(at + 1));
    const url = new URL(`/?${search}`, 'http://localhost');
    const query = url.searchParams;
    let target;
    try {
      target = await checkAuthorizationTarget(store, options, issuer, query, url.search.slice(1));
    } catch (err) {
      renderTargetError(res, context, err);
      return;
    }
    try {
      const pending = checkAuthorizationParameters(options, issuer, target, query, startedAt);
      const prompts = promptValues(query);
      // `prompt=none` (OpenID Connect Core §3.1.2.1): answer at once, without a page, or say which page it would take.
      const silent = prompts.includes('none');
      if (silent && prompts.length > 1) throw new InvalidRequestError('prompt=none cannot be combined with other prompt values');
      const maxAge = maxAgeOf(query);
      const signIn = await findSignIn(req, userAuth, options);
      if (!signIn && silent) throw new InteractionRequiredError('login_required', 'the user is not signed in');
      const hostLoginOnly = userAuth.loginUrl !== undefined && !userAuth.verifyCredentials;
      const backFromHostLogin = hostLoginOnly ? takeHostLoginMark(req, res, options, pending.query) : false;
      // A fresh sign-in asked for (OpenID Connect Core §3.1.2.1) where only the host's login could make it: the router
      // cannot tell when the host signed the user in (a host login page may bounce a signed-in browser straight back,
      // and nothing the browser brings back proves a sign-in), so it answers as §3.1.2.1 says when it cannot
      // re-authenticate, before sending anybody to a sign-in that could not count.
      const wantsFresh = prompts.includes('login') || maxAge !== undefined;
      if (wantsFresh && (signIn?.byHost || (!signIn && hostLoginOnly))) {
        // Sent back here by a click on an expired consent page (its request kept its prompt=login or max_age, and its
        // session was replaced by the host's login, or ended): the user is at the browser and clicked, so the answer is
        // theirs to see, not an error redirect in their name. The page says why it cannot be allowed; its Deny (no
        // sign-in needed) is the way back to the integration. A link holding the mark gets this page too, and no more.
        if (notice && !silent) {
          renderDenyAgain(req, res, context, {
            requestId: encodeLoginRequest(pending.query), clientName: target.client.name, redirectUri: target.redirectUri,
            message: 'consentFormExpiredFreshSignIn',
          });
          return;
        }
        throw new InteractionRequiredError('login_required', 'the user cannot be asked to sign in again here');
      }
      if (!signIn) {
        if (hostLoginOnly) {
          // Back from the host's login for this very request and still signed out: sending it there again
          // would loop for ever (typically oauth.router mounted before the host's session and passport).
          if (backFromHostLogin) {
            renderHostLoginLoop(req, res, context);
            return;
          }
          markSentToHostLogin(res, options, pending.query);
          redirect(res, 303, userAuth.loginUrl!(req, `${context.paths.authorize}?${pending.query}`));
          return;
        }
        renderLogin(req, res, context, {
          requestId: encodeLoginRequest(pending.query), clientName: target.client.name, error: notice ? 'consentFormExpiredSignIn' : null,
          username: '', redirectUri: target.redirectUri, status: 200,
        });
        return;
      }
      if (!signIn.byHost && needsSignInAgain(req, prompts, maxAge, takeSignInFor(req, pending.query))) {
        if (silent) throw new InteractionRequiredError('login_required', 'the sign-in is older than max_age');
        renderLogin(req, res, context, {
          requestId: encodeLoginRequest(pending.query), clientName: target.client.name, error: notice ? 'consentFormExpiredSignIn' : null,
          username: '', redirectUri: target.redirectUri, status: 200,
        });
        return;
      }
      const { user } = signIn;
      // A user the host's login just signed in finds nothing made before it (session fixation).
      bindSessionToUser(req, user);
      // A returning user who already approved this integration for (at least) these scopes is not asked again,
      // unless the client asks for the consent page: `consent` among prompt's space-delimited values (OpenID
      // Connect Core §3.1.2.1, whose `prompt=login consent` must not skip it). A read-only approval never stands
      // in for an all-access request, nor a consent given to a deleted integration that had the same client_id.
      if (options.rememberConsent && store.consents && !prompts.includes('consent')) {
        const consent = await store.consents.findConsent(user.id, target.client.clientId);
        if (consent && isConsentCurrent(consent, target.client) && consentCovers(consent.scope, pending.scope, options)) {
          redirect(res, 302, await issueCodeRedirect(context, pending, user, null));
          return;
        }
      }
      if (silent) throw new InteractionRequiredError('consent_required', 'the user has not approved this request');
      const requestId = savePendingRequest(req, pending);
      renderConsent(req, res, context, { requestId, client: target.client, pending, signIn, notice });
    } catch (err) {
      const oauthError = toOAuthError(err, options);
      reportErrorAnswer(options.events, 'authorization', oauthError.error, 302);
      redirect(res, 302, errorRedirectUri(target.redirectUri, {
        error: oauthError.error,
        description: oauthError.expose ? oauthError.message : undefined,
        state: target.state,
        stateOctets: target.stateOctets,
        issuer: issuer.issuer,
      }, errorResponseMode(query)));
    }
  };
}
