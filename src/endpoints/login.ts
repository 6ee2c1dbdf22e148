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
    const pending = findPendingRequest(req, requestId);
    if (!pending || pending.issuer !== context.issuer.issuer) {
      renderError(res, context, 400, 'invalid_request', 'This sign-in request has expired. Go back to the application and start again.');
      return;
    }
    const authenticate = authenticator.authenticate('local', { session: false }, (err: unknown, user: AuthenticatedUser | false) => {
      void (async () => {
        try {
          if (err) throw err;
          if (!user) {
            const client = await store.clients.findClient(pending.clientId);
            const username = typeof body.username === 'string' ? body.username.slice(0, 200) : '';
            renderLogin(req, res, context, { requestId, clientName: client?.name ?? 'the application', error: GENERIC_FAILURE, username });
            return;
          }
          await regenerateSession(req);
          oauthSession(req).user = { id: user.id, displayName: user.displayName };
          await new Promise<void>((resolve, reject) => req.session.save((e: unknown) => (e ? reject(e) : resolve())));
          res.redirect(303, `${context.paths.authorize}?${pending.query}`);
        } catch (caught) {
          const oauthError = toOAuthError(caught, options.logger);
          renderError(res, context, oauthError.status, oauthError.error, 'Sign-in is not available right now. Please try again later.');
        }
      })();
    });
    authenticate(req, res, next);
  };
}
