// The idle and absolute lifetimes of a sign-in through the router's own login form.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';
import type { ResolvedOptions } from '../options.js';
import { clearOAuthSession, readOAuthSession } from './oauth-session.js';
import { signInEndedAt } from './ended-sign-ins.js';

/**
 * The user signed in through the router's login form, while the sign-in is younger than `session.absoluteTtl`
 * and was used within `session.idleTtl`; each use restarts the idle time. Past either, the router's data is
 * dropped and the user must sign in again. Enforced here, on the server, whatever the cookie's own expiry or
 * the session store's TTL: a kept or stolen cookie does not outlive them, nor a sign-out or a newer sign-in, whose
 * ended sign-in a request that loaded the session before may have written back (`endSignIn`).
 * @see RFC 6819 §4.4.1.4 (session lifetime), OWASP Session Management Cheat Sheet (idle and absolute timeouts).
 */
export function signedInUser(req: Request, options: ResolvedOptions, now = Date.now()): AuthenticatedUser | null {
  const data = readOAuthSession(req);
  if (!data?.user) return null;
  const signedInAt = data.signedInAt ?? 0;
  const lastSeenAt = data.lastSeenAt ?? signedInAt;
  // A sign-in this process ended (sign-out, a newer sign-in) that a request loaded before wrote back: still over.
  const endedAt = signInEndedAt(req, options, now);
  if (now - signedInAt >= options.session.absoluteTtl * 1000 || now - lastSeenAt >= options.session.idleTtl * 1000
    || (endedAt !== null && signedInAt <= endedAt)) {
    clearOAuthSession(req);
    return null;
  }
  data.lastSeenAt = now;
  return data.user;
}
