// Binds the router's CSRF token and pending requests to one signed-in user: a sign-in starts them afresh.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';
import { clearOAuthSession, oauthSession, readOAuthSession } from './oauth-session.js';

/**
 * Makes the session's CSRF token and pending requests this user's. When they were made for nobody or for
 * somebody else (the host's login just signed this user in, on a session whose cookie may have been planted
 * before), they are dropped first: nothing made before a sign-in is honoured after it.
 * @see RFC 6749 §10.12, RFC 6819 §4.4.1.4 (session fixation), OWASP Session Management (renew at sign-in).
 */
export function bindSessionToUser(req: Request, user: AuthenticatedUser): void {
  const data = readOAuthSession(req);
  if (data?.userId === user.id) return;
  const ownLogin = data?.user?.id === user.id ? data : undefined;
  clearOAuthSession(req);
  const fresh = oauthSession(req);
  if (ownLogin?.user) Object.assign(fresh, { user: ownLogin.user, signedInAt: ownLogin.signedInAt, lastSeenAt: ownLogin.lastSeenAt });
  fresh.userId = user.id;
}

/** True when the session's CSRF token and pending requests were made for this user. */
export function isSessionOf(req: Request, user: AuthenticatedUser): boolean {
  return readOAuthSession(req)?.userId === user.id;
}
