// express-session for the login and consent pages, unless the host app already runs one.
import type { NextFunction, Request, RequestHandler } from 'express';
import session from 'express-session';
import type { ResolvedOptions } from '../options.js';
import { createRandomToken } from '../crypto/random-token.js';
import { MemorySessionStore } from './memory-session-store.js';
import { sessionCookieName } from './page-cookies.js';
import { ServerError } from '../errors.js';
import { isExpressSessionMemoryStore } from './check-production-session.js';
import { createHostSessionCookieCheck } from './host-session-cookie.js';
import { foreignSessionMessage, isExpressSession } from './express-session-like.js';
import { hostSessionKey, registerSharedSessionOwner, useSharedSessionKey } from './oauth-session.js';
import { oneOfSeveralProcesses } from './several-processes.js';
import { guardEndedSessions } from './ended-sessions.js';

// Requests whose session the router made itself (none came from the host app): the host-login loop check
// words its diagnosis by it.
const ownSessionRequests = new WeakSet<Request>();

/** True when the router's own express-session, not the host app's, gave this request its `req.session`. */
export function hasRouterOwnSession(req: Request): boolean {
  return ownSessionRequests.has(req);
}

/**
 * A session middleware that steps aside when `req.session` already exists (the host's express-session).
 * Cookies: HttpOnly, SameSite=Lax (the authorization request is a top-level cross-site GET), and Secure
 * when the issuer is https — decided by the issuer URL, not NODE_ENV (DESIGN §5). A session is stored only
 * once somebody signs in (`saveUninitialized: false`, and signed-out pages write nothing to it); its cookie
 * rolls with each use and lives `session.idleTtl`. Without `session.store`, sessions live in a
 * MemorySessionStore, bounded and swept, never express-session's MemoryStore, which is neither.
 * Without `session.secret` a random one is made now, but the warning about it waits for the first request
 * that really uses the router's own session: a host running its own express-session never gets it. So does the
 * warning that sessions kept in this process's memory cannot serve a process that is one of several
 * (`oneOfSeveralProcesses`: node:cluster, pm2): users there are asked to sign in again. A session this process ended
 * (sign-out, sign-in) is never written back by a request that loaded it before (`guardEndedSessions`).
 * @see RFC 6749 §10.12, RFC 6819 §4.4.1.4.
 */
export function createSessionMiddleware(options: ResolvedOptions, productionOwnLogin = false): RequestHandler {
  const config = options.session;
  registerSharedSessionOwner(options.main.issuer);
  if (config.hostSession === true) return hostSessionOnly(options, productionOwnLogin);
  const configured = config.secret === undefined ? undefined : typeof config.secret === 'string' ? config.secret : [...config.secret];
  let warnAboutSecret = configured === undefined;
  // The default store, or one of the two kept in memory handed in: either holds this process's sign-ins only.
  let warnAboutProcessMemory = config.store === undefined || config.store instanceof MemorySessionStore || isExpressSessionMemoryStore(config.store);
  const secure = options.main.secure;
  const useHostSession = createHostSessionUse(options);
  const middleware = session({
    name: sessionCookieName(options),
    secret: configured ?? createRandomToken(),
    resave: false,
    saveUninitialized: false,
    rolling: true,
    // Behind a TLS-terminating proxy, trust X-Forwarded-Proto for the Secure-cookie decision only.
    ...(secure ? { proxy: true } : {}),
    // The option is typed loosely for hosts without @types/express-session; the object is such a Store.
    // Guarded: a request that loaded a session before a sign-out ended it must not write it back (ended-sessions.ts).
    store: guardEndedSessions((config.store ?? new MemorySessionStore({ ttl: config.idleTtl })) as session.Store, config.idleTtl),
    cookie: { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: config.idleTtl * 1000 },
  });
  return function oauthSessionMiddleware(req, res, next) {
    if ((req as { session?: unknown }).session) {
      // express-session itself steps aside for any req.session, so another middleware's cannot be worked around here.
      if (useHostSession(req, next)) next();
      return;
    }
    if (warnAboutSecret) {
      warnAboutSecret = false;
      options.logger.warn('express-oauth-router: no session.secret set; using a random one (login sessions will not survive a restart or span instances)');
    }
    if (warnAboutProcessMemory) {
      warnAboutProcessMemory = false;
      const several = oneOfSeveralProcesses();
      if (several !== null) {
        options.logger.warn(`express-oauth-router: login sessions are kept in this process's memory (${config.store === undefined ? 'no session.store' : 'session.store is a memory store'}), but this process is ${several}: `
          + 'a sign-in made at one process is unknown to the others, which ask the user to sign in again. Give every process the same '
          + 'session.store (connect-redis, connect-pg-simple, …) and session.secret');
      }
    }
    ownSessionRequests.add(req);
    middleware(req, res, next);
  };
}

/**
 * With `session.hostSession`: the host's express-session must have run. A request without `req.session` reached the
 * router before it (mounted first, or on a path the host's session does not cover): a 500 page, and one log line
 * naming the fix, rather than sign-ins kept nowhere. With `productionOwnLogin` (NODE_ENV=production, the router's own
 * login), the first request's session store is checked as checkProductionSession checks the router's own: express-session's
 * MemoryStore, which never sweeps, is logged as an error once (the host's store is not known at start-up). On an https
 * issuer, a host session cookie without Secure or SameSite is logged once (createHostSessionCookieCheck).
 */
function hostSessionOnly(options: ResolvedOptions, productionOwnLogin: boolean): RequestHandler {
  let logged = false;
  let storeChecked = !productionOwnLogin;
  const useHostSession = createHostSessionUse(options);
  return function hostSessionCheck(req, _res, next) {
    if ((req as { session?: unknown }).session) {
      if (!useHostSession(req, next)) return;
      if (!storeChecked) {
        storeChecked = true;
        if (isExpressSessionMemoryStore((req as { sessionStore?: unknown }).sessionStore)) {
          options.logger.error("express-oauth-router: NODE_ENV=production and your express-session keeps sign-ins in express-session's "
            + 'MemoryStore, which never sweeps expired sessions and grows without bound: give it a shared store such as connect-redis');
        }
      }
      next();
      return;
    }
    if (!logged) {
      logged = true;
      options.logger.error('express-oauth-router: session.hostSession is set, but a request reached the router without req.session: '
        + 'mount your express-session before the router, on every path the router serves');
    }
    // An OAuthError: the page error handler shows it without logging it again per request.
    next(new ServerError('the router is mounted before the host app\'s express-session'));
  };
}

/**
 * Takes the host's `req.session` for this request: one that is not express-session's (cookie-session's plain object)
 * is refused with a 500 page and one log line naming the fix, at the first page that needs a session, rather than a
 * login page whose sign-in fails with a TypeError; express-session's gets this router's key and issuer mark
 * (`useSharedSessionKey`) and its cookie checked (`createHostSessionCookieCheck`). False when refused: `next` has the error.
 */
function createHostSessionUse(options: ResolvedOptions): (req: Request, next: NextFunction) => boolean {
  const checkHostCookie = createHostSessionCookieCheck(options.main.secure, (message) => options.logger.warn(message));
  const sharedKey = hostSessionKey(options.session.cookieName);
  const onForeign = createForeignRouterWarning(options);
  let logged = false;
  return (req, next) => {
    if (!isExpressSession((req as { session?: unknown }).session)) {
      if (!logged) {
        logged = true;
        options.logger.error(foreignSessionMessage(options.session.hostSession === true));
      }
      // An OAuthError: the page error handler shows it without logging it again per request.
      next(new ServerError('req.session is not an express-session'));
      return false;
    }
    useSharedSessionKey(req, sharedKey, options.main.issuer, onForeign);
    checkHostCookie(req);
    return true;
  };
}

/**
 * Warns once when this router finds another router's sign-in under its key of the host's session: two routers mounted
 * behind one express-session with one `session.cookieName`. Each then takes the other's data as none (so neither
 * signs a browser in as the other's user), and each sign-in signs the browser out of the other.
 */
function createForeignRouterWarning(options: ResolvedOptions): (owner: string) => void {
  let warned = false;
  return (owner) => {
    if (warned) return;
    warned = true;
    options.logger.warn(`express-oauth-router: your express-session holds another router's sign-in (issuer ${owner.slice(0, 200)}) under `
      + `this router's key (issuer ${options.main.issuer}): two routers behind one express-session need two session.cookieName values, `
      + 'or each sign-in signs the browser out of the other');
  };
}
