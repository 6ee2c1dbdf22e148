// Tells express-session's req.session from another session middleware's (cookie-session's plain object).

/** The methods of express-session's Session the router calls: a new id at sign-in, saves, re-reads, sign-out. */
const SESSION_METHODS = ['regenerate', 'save', 'reload', 'destroy'] as const;

/**
 * What the log says once when the host's `req.session` is not express-session's. With `session.hostSession` the router
 * keeps its sign-ins in the host's session and runs none of its own, so only express-session will do there.
 */
export function foreignSessionMessage(hostSessionOnly: boolean): string {
  return 'express-oauth-router: req.session was set by a session middleware that is not express-session '
    + '(it has no regenerate(), save(), reload() and destroy(); cookie-session sets such a plain object), so the router cannot keep '
    + 'sign-ins in it. '
    + (hostSessionOnly
      ? 'With session.hostSession the router keeps sign-ins in your session: use express-session for it (and keep the other '
        + 'middleware to your own paths), or drop hostSession so that the router runs its own.'
      : 'Mount that middleware after oauth.router, or only on your own paths, so that the router runs its own '
        + 'session; or use express-session, which the router shares (session.hostSession).');
}

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
