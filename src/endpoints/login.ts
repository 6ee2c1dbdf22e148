// POST /oauth2/login: the sign-in form, checked by passport-local over the host's verifyCredentials.
import type { NextFunction, Request, Response } from 'express';
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import type { AuthenticatedUser } from '../user-auth.js';
import type { PageContext } from './page-context.js';
import { isValidCsrfToken } from '../http/csrf.js';
import { findPendingRequest } from '../http/pending-requests.js';
import { oauthSession } from '../http/oauth-session.js';
import { regenerateSession } from '../http/regenerate-session.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { renderError, renderLogin } from './render.js';
import { CONSENTS_PAGE_REQUEST } from './consents.js';

const GENERIC_FAILURE = 'The username or password is incorrect.';

/**
 * Builds the login handler. A private Passport instance (never the global one) with passport-local and no
 * passport session: the router keeps its user under its own session key, so a host app's own passport setup
 * is left alone. A wrong CSRF token or an unknown request id never reaches the credential check.
 * @see RFC 6749 §3.1, §10.12 (CSRF), RFC 6819 §4.4.1.4.
 */
export function createLoginEndpoint(context: PageContext) {
  const { userAuth, options, store } = context;
  const authenticator = new passport.Passport();
  authenticator.use(new LocalStrategy({ session: false }, (username, password, done) => {
    const verify = userAuth.verifyCredentials;
    if (!verify) return done(null, false);
    verify(username, password).then((user) => done(null, user ?? false), (err: unknown) => done(err));
  }));

  return function loginEndpoint(req: Request, res: Response, next: NextFunction): void {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!isValidCsrfToken(req, body.csrf_token)) {
      renderError(res, context, 403, 'invalid_request', 'The form has expired. Go back to the application and start again.');
      return;
    }
    const requestId = typeof body.request_id === 'string' ? body.request_id : '';
    // Either a pending authorization request, or the connected-applications page (a fixed id that no random
    // 43-character request id can equal).
    const pending = requestId === CONSENTS_PAGE_REQUEST ? null : findPendingRequest(req, requestId);
    if (requestId !== CONSENTS_PAGE_REQUEST && (!pending || pending.issuer !== context.issuer.issuer)) {
      renderError(res, context, 400, 'invalid_request', 'This sign-in request has expired. Go back to the application and start again.');
      return;
    }
    const resumeUrl = pending ? `${context.paths.authorize}?${pending.query}` : context.paths.consents;
    const authenticate = authenticator.authenticate('local', { session: false }, (err: unknown, user: AuthenticatedUser | false) => {
      void (async () => {
        try {
          if (err) throw err;
          if (!user) {
            const client = pending ? await store.clients.findClient(pending.clientId) : null;
            const username = typeof body.username === 'string' ? body.username.slice(0, 200) : '';
            const clientName = pending ? client?.name ?? 'the application' : options.productName;
            renderLogin(req, res, context, { requestId, clientName, error: GENERIC_FAILURE, username, ...(pending ? { redirectUri: pending.redirectUri } : {}) });
            return;
          }
          await regenerateSession(req);
          oauthSession(req).user = { id: user.id, displayName: user.displayName };
          await new Promise<void>((resolve, reject) => req.session.save((e: unknown) => (e ? reject(e) : resolve())));
          res.redirect(303, resumeUrl);
        } catch (caught) {
          const oauthError = toOAuthError(caught, options.logger);
          renderError(res, context, oauthError.status, oauthError.error, 'Sign-in is not available right now. Please try again later.');
        }
      })();
    });
    authenticate(req, res, next);
  };
}
