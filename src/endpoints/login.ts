// POST /oauth2/login: the sign-in form, checked by passport-local over the host's verifyCredentials.
import { callHostHook } from '../http/call-host-hook.js';
import type { NextFunction, Request, Response } from 'express';
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import type { AuthenticatedUser } from '../user-auth.js';
import type { PageContext } from './page-context.js';
import type { LoginFailedEvent } from '../events/event-types.js';
import { isValidLoginCsrf } from '../http/login-csrf.js';
import { startSignedInSession } from '../http/regenerate-session.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { TooManyAttemptsError } from '../errors.js';
import { isStoreId } from '../stores/store-policy.js';
import { checkHostUser } from '../checks/host-user.js';
import { resumeAuthorization } from './resume-authorization.js';
import { renderError, renderLogin, type ErrorDescription } from './render.js';
import { CONSENTS_PAGE_REQUEST } from './consents.js';
import { reachedOverHttps } from '../http/reached-over-https.js';
import { sessionCookieSent } from '../http/session-cookie-sent.js';
import { errorRedirectUri } from '../http/error-redirect-uri.js';
import { reportErrorAnswer } from '../metrics/channels.js';
import { echoedUsername } from './echoed-username.js';
import { answeredByHost, redirect } from '../http/answered-by-host.js';


/** Where a successful sign-in goes, and what a failed one shows again. */
interface Resume {
  readonly url: string;
  readonly clientName: string;
  readonly redirectUri?: string;
  /** The integration of the authorization request, for the audit events; null for the consents page. */
  readonly clientId: string | null;
  /** The authorization request's validated query, for which this sign-in is then made (`prompt=login`, `max_age`). */
  readonly query?: string;
  /** Where a Cancel sends the browser: the request's redirect_uri with `access_denied` and its state (built on a Cancel only). */
  /** The integration's redirect for a Cancel; `denied`: the Deny of a consent page's notice, not a sign-in's Cancel. */
  readonly cancelled?: (denied: boolean) => string;
}

/**
 * Builds the login handler. A private Passport instance (never the global one) with passport-local and no
 * passport session: the router keeps its user under its own session key, so a host app's own passport setup
 * is left alone. A wrong CSRF token or a request that does not validate never reaches the credential check.
 * The form carries its authorization request (no session exists before the sign-in), so that request is
 * validated again here, in full; the session is created only by a successful sign-in, with a new id, the
 * user and a new CSRF token, and nothing else. Each outcome is reported: `login.succeeded`, `login.failed`
 * (bad credentials, a failed CSRF check, the limit) and `rate_limit.hit`.
 * @see RFC 6749 §3.1, §10.12 (CSRF, login CSRF), RFC 6819 §4.4.1.4 (session fixation).
 */
export function createLoginEndpoint(context: PageContext) {
  const { userAuth, options, issuer } = context;
  const authenticator = new passport.Passport();
  const limit = context.loginRateLimit ?? null;
  let warnedAboutHttp = false;
  let warnedAboutUnsentCookie = false;
  authenticator.use(new LocalStrategy({ session: false, passReqToCallback: true }, (req, username, password, done) => {
    // A username no user directory keeps (a control character such as NUL, over 255 characters) fails like a
    // wrong password, without reaching the host's database, where it could only be an error.
    if (!userAuth.verifyCredentials || !isStoreId(username)) return done(null, false);
    // Called on its object, never detached: a host's UserAuth may be a class whose methods read `this`.
    const check = () => callHostHook('verifyCredentials', () => userAuth.verifyCredentials!(username, password))
      .then((user) => checkHostUser(user, 'verifyCredentials'));
    // Under loginRateLimit the password is checked only if the limit lets this attempt through, and counted.
    (limit ? limit.attempt(req, username, check) : check())
      .then((user) => done(null, user ?? false), (err: unknown) => done(err));
  }));

  /** The request the form resumes: the connected-applications page, or an authorization request that still validates. */
  async function resumeOf(requestId: string): Promise<Resume | null> {
    // A fixed id that no encoded authorization request can equal (it would start with response_type).
    if (requestId === CONSENTS_PAGE_REQUEST) return { url: context.paths.consents, clientName: options.productName, clientId: null };
    const resumed = await resumeAuthorization(context, requestId);
    if (!resumed) return null;
    const { target, pending } = resumed;
    return {
      url: `${context.paths.authorize}?${pending.query}`, clientName: target.client.name, redirectUri: target.redirectUri,
      clientId: target.client.clientId, query: pending.query,
      cancelled: (denied) => errorRedirectUri(target.redirectUri, {
        error: 'access_denied', description: denied ? 'the user denied the request' : 'the user cancelled the sign-in',
        state: target.state, stateOctets: target.stateOctets,
        issuer: issuer.issuer,
      }),
    };
  }

  /** The page of a sign-in the service cannot take now (a store outage). */
  function unavailable(res: Response, caught: unknown): void {
    const oauthError = toOAuthError(caught, options);
    renderError(res, context, oauthError.status, oauthError.error, { message: 'signInUnavailable' });
  }

  /**
   * The request the form resumes, or `null` once the answer is sent: the outage page, or `status` with `expired`
   * when the request no longer validates.
   */
  async function resumeOrAnswer(res: Response, requestId: string, status: number, expired: ErrorDescription): Promise<Resume | null> {
    let resume: Resume | null;
    try {
      resume = await resumeOf(requestId);
    } catch (caught) {
      unavailable(res, caught);
      return null;
    }
    if (!resume) renderError(res, context, status, 'invalid_request', expired);
    return resume;
  }

  /**
   * Answers a form whose CSRF token no longer matches (its cookie expired or was cleared while the page was open):
   * the same sign-in form again, with a valid token and nothing of what was typed, when its request still
   * resumes; the error page otherwise. Nothing of the POST is acted on, so a forged one only shows a form.
   * @see RFC 6749 §10.12, WCAG 2.2.1 (a timed-out form continues rather than dead-ends).
   */
  async function refreshedForm(req: Request, res: Response, requestId: unknown): Promise<void> {
    const expired = { message: 'formExpiredStartAgain' } as const;
    if (typeof requestId !== 'string') {
      renderError(res, context, 403, 'invalid_request', expired);
      return;
    }
    const resume = await resumeOrAnswer(res, requestId, 403, expired);
    if (!resume) return;
    renderLogin(req, res, context, {
      requestId, clientName: resume.clientName, error: 'signInFormExpired', username: '', status: 403,
      ...(resume.redirectUri !== undefined ? { redirectUri: resume.redirectUri } : {}),
    });
  }

  /** Reports a refused sign-in; the username typed is left out: users type passwords into it. */
  function publishFailure(req: Request, reason: LoginFailedEvent['reason'], clientId: string | null): void {
    const common = { time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, clientId };
    options.events.publish({ type: 'login.failed', reason, ...common });
    if (reason === 'rate_limited') options.events.publish({ type: 'rate_limit.hit', limit: 'login', ...common });
  }

  return function loginEndpoint(req: Request, res: Response, next: NextFunction): void {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (options.main.secure && !reachedOverHttps(req)) {
      // The Secure session cookie would not be set: the user would be "signed in" and sent back to this page. Checked
      // before the CSRF cookie, which is Secure too: a browser on plain http never stores it, so every post would
      // otherwise get the form again, "expired", with nothing logged.
      if (!warnedAboutHttp) {
        warnedAboutHttp = true;
        options.logger.warn('express-oauth-router: a sign-in reached the router over plain http while the issuer is https, so the '
          + 'session cookie (Secure) cannot be set. Serve it over https, or have the TLS proxy send X-Forwarded-Proto: https.');
      }
      renderError(res, context, 400, 'invalid_request', { message: 'httpsRequired' });
      return;
    }
    if (!isValidLoginCsrf(req, options, body.csrf_token)) {
      publishFailure(req, 'csrf', null);
      void refreshedForm(req, res, body.request_id);
      return;
    }
    const requestId = typeof body.request_id === 'string' ? body.request_id : '';
    void (async () => {
      const found = await resumeOrAnswer(res, requestId, 400, { message: 'signInRequestExpired' });
      if (!found) return;
      // Cancel: the user will not sign in; the integration hears it (RFC 6749 §4.1.2.1) instead of waiting for ever.
      if (body.cancel !== undefined && found.cancelled !== undefined) {
        // 303: the POST carried the password fields; the redirect must not resend them (RFC 9700 §4.12.2).
        reportErrorAnswer(options.events, 'authorization', 'access_denied', 303);
        // The Deny of a page that stood in for the consent page (deny-again-page.ts) says so, as the consent page's Deny does.
        redirect(res, 303, found.cancelled(body.cancel === 'deny'));
        return;
      }
      const authenticate = authenticator.authenticate('local', { session: false }, (err: unknown, user: AuthenticatedUser | false) => {
        void (async () => {
          try {
            if (err) throw err;
            if (!user) {
              publishFailure(req, 'bad_credentials', found.clientId);
              const username = echoedUsername(body.username);
              renderLogin(req, res, context, {
                requestId, clientName: found.clientName, error: 'signInFailed', errorInFields: true, username,
                ...(found.redirectUri !== undefined ? { redirectUri: found.redirectUri } : {}),
              });
              return;
            }
            // The host answered meanwhile (connect-timeout's 503 during a slow directory): its answer went out with the
            // cookie of the session the browser holds, so no sign-in is started. Regenerated now, that session (the host's
            // too, when the router shares its express-session) would be destroyed under the browser's cookie, and the new
            // one, signed in, would name no cookie: the browser signed out of both. The user signs in again from the form.
            if (answeredByHost(res)) return;
            await startSignedInSession(req, options, user, Date.now(), found.query);
            options.events.publish({
              type: 'login.succeeded', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, userId: user.id, clientId: found.clientId,
            });
            // The host answered while the session was saved: its answer, not the router's, says nothing of the cookie setting.
            if (answeredByHost(res)) return;
            redirect(res, 303, found.url);
            // The cookie is decided as the headers are written (express-session's hook), so only now can it be missed:
            // the browser comes back signed out, to this page, and nothing else would say why.
            if (!warnedAboutUnsentCookie && res.headersSent && !sessionCookieSent(req, res)) {
              warnedAboutUnsentCookie = true;
              options.logger.error('express-oauth-router: a sign-in succeeded, but its answer carried no session cookie, so the browser '
                + 'comes back signed out: express-session leaves a cookie with secure: true out on a request it does not judge '
                + "secure. Behind a TLS-terminating proxy set app.set('trust proxy', …) to your proxies (or express-session's "
                + "proxy: true) so that X-Forwarded-Proto: https counts; on plain http, do not make the cookie secure.");
            }
          } catch (caught) {
            if (!(caught instanceof TooManyAttemptsError)) {
              unavailable(res, caught);
              return;
            }
            // The form again, with the wait: once it is over the user signs in from here, without going back.
            publishFailure(req, 'rate_limited', found.clientId);
            // The host answered while the counts were read (connect-timeout's 503 during a slow store): a header set now
            // throws, a rejection of this detached function that nothing handles, which ends the process.
            if (answeredByHost(res)) return;
            res.setHeader('Retry-After', String(caught.retryAfterSeconds));
            const username = echoedUsername(body.username);
            renderLogin(req, res, context, {
              requestId, clientName: found.clientName, error: { retryAfterSeconds: caught.retryAfterSeconds }, username, status: 429,
              ...(found.redirectUri !== undefined ? { redirectUri: found.redirectUri } : {}),
            });
          }
        })();
      });
      authenticate(req, res, next);
    })();
  };
}
