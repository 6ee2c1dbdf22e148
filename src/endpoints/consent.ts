// POST /oauth2/consent: Allow issues a code and redirects; Deny redirects with access_denied (RFC 6749 §4.1.2).
import type { Request, Response } from 'express';
import type { PageContext } from './page-context.js';
import { isValidCsrfToken } from '../http/csrf.js';
import { isSessionEnded } from '../http/session-ended.js';
import { answeredDecision, deletePendingRequest, findExpiredPendingRequest, findPendingRequest, markRequestAnswered } from '../http/pending-requests.js';
import { findCurrentUser, findSignIn } from '../http/current-user.js';
import { endRouterSignIn } from '../http/end-router-sign-in.js';
import { isSessionOf } from '../http/session-owner.js';
import { isSignedInAsAnother } from '../http/signed-in-as-another.js';
import { errorRedirectUri } from '../http/error-redirect-uri.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { renderDenyAgain, renderError, renderTargetError, type ErrorDescription } from './render.js';
import { issueCodeRedirect } from './issue-code.js';
import { consentScopeAfterAllow } from '../consents/consent-scope-after-allow.js';
import { reportErrorAnswer } from '../metrics/channels.js';
import { checkAuthorizationTarget } from '../checks/authorization-request.js';
import { resumeAuthorization } from './resume-authorization.js';
import type { PendingAuthorization } from '../http/oauth-session.js';
import type { OAuthClient } from '../stores/contract.js';
import { encodeLoginRequest } from '../http/login-request.js';
import { reloadSession, saveSession } from '../http/save-session.js';
import { withExpiredConsentNotice } from '../http/expired-consent-notice.js';
import { redirect } from '../http/answered-by-host.js';

/** How a consent POST was answered: the redirect's Location (null: a page), and whether it ended the sign-in. */
interface Answer {
  readonly location: string | null;
  readonly signedOut: boolean;
  /** What the request was answered with, once a code or an access_denied went out (markRequestAnswered). */
  readonly answered?: 'allow' | 'deny';
}

/** `query` with `consent` among its prompt values: the consent page is shown even where a consent is remembered. */
function withConsentPrompt(query: string): string {
  const params = new URLSearchParams(query);
  const prompt = params.get('prompt') ?? '';
  if (!prompt.split(' ').includes('consent')) params.set('prompt', prompt === '' ? 'consent' : `${prompt} consent`);
  return params.toString();
}

/**
 * Builds the consent handler. The decision is taken only with a valid CSRF token, for a request this session
 * started, by the signed-in user the token and the request were made for (nothing from before a sign-in
 * counts after it), and each pending request is answered once.
 * - allow: a 256-bit code (stored hashed, single use, bound to client, user, redirect_uri, PKCE challenge
 *   and issuer, living `authorizationCodeTtl` seconds) → 303 to redirect_uri with `code`, `state`, `iss`;
 * - deny: 303 with `error=access_denied`;
 * - switch ("use another account", offered after the router's own sign-in): signs the browser out and sends it back
 *   to the authorization request (303), which asks for a sign-in again: the request is neither allowed nor denied;
 * - a form that cannot be decided as this session's own (open longer than its pending request lives, answered
 *   already, its request dropped for newer ones, or its session ended or replaced meanwhile, so its CSRF token no
 *   longer matches) is not refused into a dead end: the request it carries (`resume`) is validated again in full
 *   and a Deny whose CSRF token still matches is sent to its redirect_uri as `access_denied` (a refusal gives nothing
 *   away, and the integration hears it, RFC 6749 §4.1.2.1); one whose session ended is answered with the notice that
 *   nothing was sent and a Deny that needs no sign-in (renderDenyAgain); one whose token no longer matches its session
 *   (replaced, or a forged POST) is answered as an Allow, which goes back to the authorization endpoint (303) with every check
 *   re-run (WCAG 2.2.1), asking for consent again there (`prompt=consent`): the page it answered named a user who
 *   may no longer be the one signed in, and a remembered consent of another must not turn that click, or a Deny,
 *   into a code for them, and with a mark (`oauth_router_notice`) by which the page asked again says the click was
 *   not taken and nothing was sent (unless this session answered the request already); a switch on this session's
 *   own form (its CSRF token valid) whose request was answered or expired still signs out;
 * - a Deny of a request this session already allowed (its form again: a duplicated tab, a restored page) is not sent
 *   to the integration as `access_denied`, which would contradict the code it was given and the consent remembered: a
 *   409 page says where access is taken back. The mark is saved before the answer goes out; a Deny on another instance
 *   while the Allow is still issuing (no sticky sessions) can still reach the integration;
 * - a second POST of a request while the first is being answered (a double tap, Allow then Deny, a browser that
 *   cancelled the first) gets the first's answer (`answering`), so the request is answered once in this process. The
 *   first saves the session without the request before it issues anything, so once its answer is given a
 *   resubmission finds the request answered, and is never handed the same code again.
 * Either answer first checks the integration again as GET /oauth2/authorize did (it exists, is enabled, belongs
 * to this base address and still registers the redirect_uri): one disabled or deleted while the page was open
 * gets the error page, so no code, consent or redirect goes to it.
 * An approval is reported as `consent.granted` (a remembered consent skips this page and is not reported again).
 * @see RFC 6749 §4.1.2, §4.1.2.1, §10.5, §10.12; RFC 9207; SPEC §4.1.
 */
export function createConsentEndpoint(context: PageContext) {
  const { userAuth, options, issuer } = context;

  /** A Deny's redirect to the integration (RFC 6749 §4.1.2.1 `access_denied`), counted as the answer it is. */
  function deniedUri(to: { readonly redirectUri: string; readonly state?: string | undefined; readonly stateOctets?: string }): string {
    reportErrorAnswer(options.events, 'authorization', 'access_denied', 303);
    return errorRedirectUri(to.redirectUri, {
      error: 'access_denied', description: 'the user denied the request', state: to.state, stateOctets: to.stateOctets, issuer: issuer.issuer,
    });
  }

  /** What a session store or a host hook threw, as the error page (503 for an outage, 500 for a bug, logged). */
  function renderFailure(res: Response, err: unknown, text: ErrorDescription): void {
    const oauthError = toOAuthError(err, options);
    renderError(res, context, oauthError.status, oauthError.error, text);
  }

  /**
   * Answers a form that cannot be decided as this session's own from the request it carries: an Allow back to the
   * authorization endpoint, asking for consent again (`prompt=consent`) whatever consent is remembered: whoever is
   * signed in now may not be the user the page named (a host's login can sign another user in on the same session),
   * so the click is not taken as theirs. A Deny goes to its redirect_uri as `access_denied` when the form's CSRF token
   * still vouches for it (`tokenChecked`: its request expired, was answered or dropped, or the user signed out
   * meanwhile); without that, when its session ended (`sessionGone`), it gets the notice and a Deny that needs no
   * sign-in, at once (the host's login, where it would otherwise go, has no Cancel); when its session was replaced or
   * the POST is forged, it is answered as an Allow: the page again, saying nothing was sent, where one more click
   * refuses. So a forged POST gets only what a link could give, the endpoint's own answer, and never reaches the
   * integration.
   * @see RFC 6749 §10.12 (CSRF), RFC 6819 §4.4.1.8.
   */
  async function answerStale(
    res: Response, body: Record<string, unknown>, status: number, message: ErrorDescription,
    { ownForm, notice = true, tokenChecked = true, sessionGone = false }: {
      readonly ownForm?: Request; readonly notice?: boolean; readonly tokenChecked?: boolean; readonly sessionGone?: boolean;
    } = {},
  ): Promise<void> {
    let resumed;
    try {
      resumed = await resumeAuthorization(context, body.resume);
    } catch (err) {
      renderTargetError(res, context, err, { message: 'pageUnavailable' });
      return;
    }
    if (resumed === null) {
      renderError(res, context, status, 'invalid_request', message);
      return;
    }
    if (body.decision === 'deny' && tokenChecked) {
      redirect(res, 303, deniedUri(resumed.target));
      return;
    }
    // A Deny whose session is gone needs nobody signed in: sent on to the authorization request it would meet a sign-in
    // (the host's login page has no Cancel), so it is answered here, with the notice and a Deny that needs no session.
    if (body.decision === 'deny' && sessionGone) {
      renderDenyAgain(res.req, res, context, {
        requestId: encodeLoginRequest(resumed.pending.query), clientName: resumed.target.client.name, redirectUri: resumed.target.redirectUri,
      });
      return;
    }
    // This session's own form (its CSRF token checked), whose request is no longer pending (answered, expired,
    // dropped): "use another account" still means it, and signs out as from a fresh page.
    if (body.decision === 'switch' && ownForm !== undefined) {
      await switchAccount(ownForm, res, resumed.pending, '');
      return;
    }
    // The page asked again says the click was not taken (the mark, like the rest of the address, is the link's own:
    // a forged POST gets no more than a link to it would). Left off where this session answered the request already.
    const again = withConsentPrompt(resumed.pending.query);
    redirect(res, 303, `${context.paths.authorize}?${notice ? withExpiredConsentNotice(again) : again}`);
  }

  /**
   * The answers under way in this process, by session and request id: a redirect (or null when the answer was a page),
   * and whether it ended the sign-in. An entry lasts until its answer is given (not until its connection closes: a
   * browser cancels the first POST of a double tap), so the map holds at most the requests being decided.
   */
  const answering = new Map<string, Promise<Answer>>();
  const answerKey = (req: Request, requestId: string): string => `${req.sessionID}\n${requestId}`;

  /** A second POST of a request being answered (`first`, found in `answering`): the first's answer. */
  async function answerAsFirst(req: Request, res: Response, body: Record<string, unknown>, requestId: string, first: Promise<Answer>): Promise<void> {
    const { location, signedOut, answered } = await first;
    // A copy of the session loaded before the first changed it: without this, its save (or a store's touch) at the end
    // of the response would write it back, the request pending again (and not marked answered), or the sign-in the
    // first ended alive again.
    if (!signedOut) {
      deletePendingRequest(req, requestId);
      if (answered !== undefined) markRequestAnswered(req, requestId, answered);
    }
    else if (!(await signOut(req, res))) return;
    if (location !== null) redirect(res, 303, location);
    else await answerStale(res, body, 400, { message: 'authorizationRequestExpired' });
  }

  /** Ends the router's sign-in (`endRouterSignIn`); false, with the error page sent, when the session store failed. */
  async function signOut(req: Request, res: Response): Promise<boolean> {
    try {
      await endRouterSignIn(req, res, options);
      return true;
    } catch (err) {
      renderFailure(res, err, { message: 'signOutUnavailable' });
      return false;
    }
  }

  /**
   * Decides a pending request of this session: Allow issues a code, Deny refuses; the 303's Location, or null when
   * the answer was a page (the form was stale after all, or the integration was refused).
   */
  async function decide(
    req: Request, res: Response, body: Record<string, unknown>, pending: PendingAuthorization, requestId: string, decision: 'allow' | 'deny',
  ): Promise<string | null> {
    // 303, not 302: the answer to a POST goes on as a GET, whatever the browser (RFC 9700 §4.12.2).
    const redirectTo = (location: string): string => {
      redirect(res, 303, location);
      return location;
    };
    // Whether the integration was checked again in this request: until then its redirect_uri vouches for nothing (the
    // integration may have been disabled, deleted or its address removed while the page was open).
    let targetChecked = false;
    try {
      const user = await findCurrentUser(req, userAuth, options);
      if (!user) {
        // Signed out by the host's login meanwhile: a Deny still reaches the integration, an Allow signs in again.
        // 403 as for an expired form: a 401 would owe a WWW-Authenticate scheme (RFC 9110 §15.5.2) a page has not.
        await answerStale(res, body, 403, { message: 'signedOutMeanwhile' });
        return null;
      }
      // Made for somebody else, or before the host's login signed this user in (a planted form, another tab's sign-in, a
      // host login that kept the session and so the token): stale as if replaced, so neither an Allow nor a Deny is
      // taken for the user signed in now, whose consent page (with the notice) asks them.
      if (!isSessionOf(req, user)) {
        await answerStale(res, body, 403, { message: 'formExpiredStartAgain' }, { tokenChecked: false });
        return null;
      }
      deletePendingRequest(req, requestId);
      // Saved before anything is issued: a POST of this form that loads the session from now on finds it answered.
      await saveSession(req);
      let client: OAuthClient;
      try {
        ({ client } = await checkAuthorizationTarget(context.store, options, issuer, new URLSearchParams(pending.query)));
      } catch (err) {
        renderTargetError(res, context, err, { message: 'pageUnavailable' });
        return null;
      }
      targetChecked = true;
      // Marked once the answer is certain (a refused integration or an outage answered nothing), and saved before it
      // is sent: a Deny loading the session once the answer is out must find it, or it would reach the integration.
      if (decision === 'deny') {
        await markAnswered(req, requestId, 'deny');
        return redirectTo(deniedUri(pending));
      }
      const consentScope = await consentScopeAfterAllow(context.store, options, user.id, client, pending.scope);
      const callback = await issueCodeRedirect(context, pending, user, consentScope);
      await markAnswered(req, requestId, 'allow');
      options.events.publish({
        type: 'consent.granted', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null,
        userId: user.id, clientId: pending.clientId, scope: pending.scope,
      });
      return redirectTo(callback);
    } catch (err) {
      // Failed before the integration was checked again (the host's currentUser or the session store down): the error
      // page, nothing sent to a redirect_uri that may no longer be registered; the request stays pending, to be decided
      // once the outage is over (RFC 6749 §4.1.2.1: no redirect to an invalid redirection URI).
      if (!targetChecked) {
        renderFailure(res, err, { message: 'pageUnavailable' });
        return null;
      }
      const oauthError = toOAuthError(err, options);
      // The redirect_uri is trusted here, so RFC 6749 §4.1.2.1 server_error / temporarily_unavailable apply.
      reportErrorAnswer(options.events, 'authorization', oauthError.error, 303);
      return redirectTo(errorRedirectUri(pending.redirectUri, { error: oauthError.error, state: pending.state, issuer: issuer.issuer }));
    }
  }

  /**
   * Records how the request was answered and saves the session. A session store that fails here does not take the
   * answer back (the code is issued): the mark is lost, so a later Deny of the same form reaches the integration as
   * `access_denied` instead of the 409 page, and the failure is logged.
   */
  async function markAnswered(req: Request, requestId: string, decision: 'allow' | 'deny'): Promise<void> {
    markRequestAnswered(req, requestId, decision);
    await saveSession(req).catch((err: unknown) => {
      options.logger.warn(`express-oauth-router: the session store did not save a consent answer (${err instanceof Error ? err.name : typeof err}); `
        + 'the answer was sent, but a later Deny of the same form will reach the integration');
    });
  }

  /**
   * "Use another account": ends the router's own sign-in and sends the browser back to the authorization request,
   * whose sign-in page then asks who is there; the request is neither allowed nor denied. A host's sign-in is the
   * host's to end (the page offers no switch then): a forged or replayed switch only asks for consent again.
   */
  async function switchAccount(req: Request, res: Response, pending: PendingAuthorization, requestId: string): Promise<Answer> {
    let signIn;
    try {
      signIn = await findSignIn(req, userAuth, options);
    } catch (err) {
      renderFailure(res, err, { message: 'pageUnavailable' });
      return { location: null, signedOut: false };
    }
    // The host's sign-in, or a host-login-only set-up whose user the host signed out meanwhile: nothing of the router's
    // to end, so the form is only asked again.
    if (signIn?.byHost || (userAuth.currentUser && !userAuth.verifyCredentials)) {
      const again = `${context.paths.authorize}?${withConsentPrompt(pending.query)}`;
      redirect(res, 303, again);
      return { location: again, signedOut: false };
    }
    deletePendingRequest(req, requestId);
    if (!(await signOut(req, res))) return { location: null, signedOut: false };
    const restart = `${context.paths.authorize}?${pending.query}`;
    redirect(res, 303, restart);
    return { location: restart, signedOut: true };
  }

  return async function consentEndpoint(req: Request, res: Response): Promise<void> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    // This request loaded the session before it read the form: a sign-out or a "use another account" may have ended
    // it since (a slow body, another instance). Decided on its copy, an Allow would issue a code for the user who
    // left and save the ended session back, signing them in again.
    let live;
    try {
      live = await reloadSession(req);
    } catch (err) {
      renderFailure(res, err, { message: 'pageUnavailable' });
      return;
    }
    if (!live) {
      await answerStale(res, body, 403, { message: 'formExpiredStartAgain' }, { tokenChecked: false, sessionGone: true });
      return;
    }
    if (!isValidCsrfToken(req, body.csrf_token)) {
      // The session ended or was replaced while the page was open (idle timeout, sign-out or another sign-in in
      // another tab), or the POST is forged: nothing this form says is decided on as this session's, a Deny included.
      // Ended, not replaced, only with nobody signed in now: a host's login that signed somebody in made a session
      // without the router's token too (isSessionEnded). Asked of a Deny only, the one answer it changes.
      await answerStale(res, body, 403, { message: 'formExpiredStartAgain' },
        { tokenChecked: false, sessionGone: body.decision === 'deny' && await isSessionEnded(req, userAuth, options) });
      return;
    }
    const requestId = typeof body.request_id === 'string' ? body.request_id : '';
    const pending = findPendingRequest(req, requestId);
    const key = answerKey(req, requestId);
    // Looked up before the await below: a first POST that finishes during it would leave no trace here, and this one,
    // on a copy of the session loaded before the first marked its answer, would be answered as if none had been given.
    const first = answering.get(key);
    const expired = pending ? null : findExpiredPendingRequest(req, requestId);
    // A form its token vouches for, of a request no longer pending (expired, answered, dropped), answered below without
    // decide's check of who is signed in: shown to another user than the one signed in now (a host's login that kept the
    // session), it is stale as if its session were replaced, never a Deny sent, or a sign-out, in the new user's name.
    if ((!pending || pending.issuer !== issuer.issuer) && first === undefined) {
      let another;
      try {
        another = await isSignedInAsAnother(req, userAuth, options);
      } catch (err) {
        renderFailure(res, err, { message: 'pageUnavailable' });
        return;
      }
      if (another) {
        const resume = expired && expired.issuer === issuer.issuer ? encodeLoginRequest(expired.query) : body.resume;
        await answerStale(res, { ...body, resume }, 403, { message: 'formExpiredStartAgain' }, { tokenChecked: false });
        return;
      }
    }
    if (expired && expired.issuer === issuer.issuer) {
      // Open longer than a pending request lives: asked again from the start (every check re-run), not refused.
      deletePendingRequest(req, requestId);
      await answerStale(res, { ...body, resume: encodeLoginRequest(expired.query) }, 400,
        { message: 'authorizationRequestExpired' }, { ownForm: req });
      return;
    }
    if (!pending || pending.issuer !== issuer.issuer) {
      if (first !== undefined) {
        await answerAsFirst(req, res, body, requestId, first);
        return;
      }
      // A Deny of a request this session allowed (its form again: a duplicated tab, a restored page): the integration holds a code, or
      // tokens, and a remembered consent stands, so telling it access_denied would contradict both (RFC 6749 §10.12).
      // The user is told where taking it back is done instead.
      if (body.decision === 'deny' && answeredDecision(req, requestId) === 'allow') {
        renderError(res, context, 409, 'invalid_request', {
          // Where access is taken back: the connected-applications page, when this server offers it.
          message: options.consentsPage && options.rememberConsent ? 'alreadyAllowedWithdraw' : 'alreadyAllowedAsk',
        });
        return;
      }
      // Answered already (a second tap of Allow whose first answer the browser dropped), or dropped for newer ones.
      // Only the latter is told "nothing was sent": an answered request's first click was.
      await answerStale(res, body, 400, { message: 'authorizationRequestExpired' }, { ownForm: req, notice: answeredDecision(req, requestId) === null });
      return;
    }
    const decision = body.decision;
    if (decision !== 'allow' && decision !== 'deny' && decision !== 'switch') {
      renderError(res, context, 400, 'invalid_request', { message: 'chooseAllowOrDeny' });
      return;
    }
    // A second POST of this request while the first is being answered (a double tap, Allow then Deny): both loaded
    // the session before either saved it, so both found the request pending. It gets the first's answer, so the
    // request is answered once: one code, one consent, and the integration and the consent store agree. Looked up and
    // registered with no await between: two POSTs whose sessions the store handed back together (the replies of one
    // Redis read resolve in one turn) each found none under way across an await, and both answered, a code and an
    // access_denied for one state (an outside run: 11 of 30 triple taps on the example app's Redis sessions).
    if (first !== undefined) {
      await answerAsFirst(req, res, body, requestId, first);
      return;
    }
    const answer = (decision === 'switch'
      ? switchAccount(req, res, pending, requestId)
      : decide(req, res, body, pending, requestId, decision).then((location): Answer => {
        const answered = answeredDecision(req, requestId);
        return { location, signedOut: false, ...(answered === null ? {} : { answered }) };
      }))
      .finally(() => answering.delete(key));
    answering.set(key, answer);
    await answer;
  };
}
