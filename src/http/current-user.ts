// Who is signed in at the authorization endpoint: the host's login when it has one, else ours.
import type { Request } from 'express';
import type { AuthenticatedUser, UserAuth } from '../user-auth.js';
import type { ResolvedOptions } from '../options.js';
import { signedInUser } from './session-lifetime.js';
import { checkHostUser } from '../checks/host-user.js';

/**
 * The signed-in user or `null`. A host `currentUser(req)` takes precedence over the router's own session,
 * whose sign-in counts only within its idle and absolute lifetimes.
 * @see RFC 6749 §3.1 ("MUST first verify the identity of the resource owner").
 */
export async function findCurrentUser(req: Request, userAuth: UserAuth, options: ResolvedOptions): Promise<AuthenticatedUser | null> {
  if (userAuth.currentUser) {
    const user = checkHostUser(await userAuth.currentUser(req), 'currentUser');
    if (user) return user;
    if (!userAuth.verifyCredentials) return null;
  }
  return signedInUser(req, options);
}
