// The idle and absolute lifetimes of a sign-in through the router's own login form.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';
import type { ResolvedOptions } from '../options.js';
import { clearOAuthSession, readOAuthSession } from './oauth-session.js';

/**
 * The user signed in through the router's login form, while the sign-in is younger than `session.absoluteTtl`
 * and was used within `session.idleTtl`; each use restarts the idle time. Past either, the router's data is
 * dropped and the user must sign in again. Enforced here, on the server, whatever the cookie's own expiry or
 * the session store's TTL: a kept or stolen cookie does not outlive them.
 * @see RFC 6819 §4.4.1.4 (session lifetime), OWASP Session Management Cheat Sheet (idle and absolute timeouts).
 */
export function signedInUser(req: Request, options: ResolvedOptions, now = Date.now()): AuthenticatedUser | null {
  const data = readOAuthSession(req);
  if (!data?.user) return null;
  const signedInAt = data.signedInAt ?? 0;
  const lastSeenAt = data.lastSeenAt ?? signedInAt;
  if (now - signedInAt >= options.session.absoluteTtl * 1000 || now - lastSeenAt >= options.session.idleTtl * 1000) {
    clearOAuthSession(req);
    return null;
  }
  data.lastSeenAt = now;
  return data.user;
}
