// Tells express-session's req.session from another session middleware's (cookie-session's plain object).

/** The methods of express-session's Session the router calls: a new id at sign-in, saves, re-reads, sign-out. */
const SESSION_METHODS = ['regenerate', 'save', 'reload', 'destroy'] as const;

/** What the log says once when the host's `req.session` is not express-session's. */
export const FOREIGN_SESSION_MESSAGE = 'express-oauth-router: req.session was set by a session middleware that is not express-session '
  + '(it has no regenerate(), save(), reload() and destroy(); cookie-session sets such a plain object), so the router cannot keep '
  + 'sign-ins in it. Mount that middleware after oauth.router, or only on your own paths, so that the router runs its own '
  + 'session; or use express-session, which the router shares (session.hostSession).';

/**
 * True when `session` is express-session's Session. The router gives every sign-in a new session id (RFC 6819
 * §4.4.1.4: no session fixation), saves before the redirects that follow and destroys at sign-out; a session without
 * those methods would let the login page render and then fail the sign-in with a TypeError that names no cause.
 */
export function isExpressSession(session: unknown): boolean {
  if (typeof session !== 'object' || session === null) return false;
  const methods = session as Record<string, unknown>;
  return SESSION_METHODS.every((name) => typeof methods[name] === 'function');
}
