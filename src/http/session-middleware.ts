// express-session for the login and consent pages, unless the host app already runs one.
import type { RequestHandler } from 'express';
import session from 'express-session';
import type { ResolvedOptions } from '../options.js';
import { createRandomToken } from '../crypto/random-token.js';

/**
 * A session middleware that steps aside when `req.session` already exists (the host's express-session).
 * Cookies: HttpOnly, SameSite=Lax (the authorization request is a top-level cross-site GET), and Secure
 * when the issuer is https — decided by the issuer URL, not NODE_ENV (DESIGN §5).
 * @see RFC 6749 §10.12, RFC 6819 §4.4.1.4.
 */
export function createSessionMiddleware(options: ResolvedOptions): RequestHandler {
  const config = options.session;
  let secret = config.secret === undefined ? undefined : typeof config.secret === 'string' ? config.secret : [...config.secret];
  if (secret === undefined) {
    options.logger.warn('express-oauth-router: no session.secret set; using a random one (login sessions will not survive a restart or span instances)');
    secret = createRandomToken();
  }
  const secure = options.main.secure;
  const middleware = session({
    name: config.cookieName ?? 'oauth.sid',
    secret,
    resave: false,
    saveUninitialized: false,
    // Behind a TLS-terminating proxy, trust X-Forwarded-Proto for the Secure-cookie decision only.
    ...(secure ? { proxy: true } : {}),
    ...(config.store ? { store: config.store } : {}),
    cookie: { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: (config.ttl ?? 3600) * 1000 },
  });
  return function oauthSessionMiddleware(req, res, next) {
    if ((req as { session?: unknown }).session) {
      next();
      return;
    }
    middleware(req, res, next);
  };
}
