// Who is signed in at the authorization endpoint: the host's login when it has one, else ours.
import type { Request } from 'express';
import type { AuthenticatedUser, UserAuth } from '../user-auth.js';
import { oauthSession } from './oauth-session.js';

/**
 * The signed-in user or `null`. A host `currentUser(req)` takes precedence over the router's own session.
 * @see RFC 6749 §3.1 ("MUST first verify the identity of the resource owner").
 */
export async function findCurrentUser(req: Request, userAuth: UserAuth): Promise<AuthenticatedUser | null> {
  if (userAuth.currentUser) {
    const user = await userAuth.currentUser(req);
    if (user) return user;
    if (!userAuth.verifyCredentials) return null;
  }
  return oauthSession(req).user ?? null;
}
