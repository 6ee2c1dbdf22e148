// Who is signed in at the authorization endpoint: the host's login when it has one, else ours.
import type { Request } from 'express';
import type { AuthenticatedUser, UserAuth } from '../user-auth.js';
import type { ResolvedOptions } from '../options.js';
import { signedInUser } from './session-lifetime.js';
import { checkHostUser } from '../checks/host-user.js';
import { callHostHook } from './call-host-hook.js';

/**
 * The signed-in user or `null`. A host `currentUser(req)` takes precedence over the router's own session,
 * whose sign-in counts only within its idle and absolute lifetimes.
 * @see RFC 6749 §3.1 ("MUST first verify the identity of the resource owner").
 */
export async function findCurrentUser(req: Request, userAuth: UserAuth, options: ResolvedOptions): Promise<AuthenticatedUser | null> {
  return (await findSignIn(req, userAuth, options))?.user ?? null;
}

/** A signed-in user, and whose sign-in it is: the host's (`currentUser`), which only the host can end, or the router's. */
export interface SignIn {
  readonly user: AuthenticatedUser;
  readonly byHost: boolean;
}

/** As `findCurrentUser`, saying whose sign-in it is, for the pages that offer to end it. */
export async function findSignIn(req: Request, userAuth: UserAuth, options: ResolvedOptions): Promise<SignIn | null> {
  const hostUser = await findHostUser(req, userAuth);
  if (hostUser) return { user: hostUser, byHost: true };
  if (userAuth.currentUser && !userAuth.verifyCredentials) return null;
  const user = signedInUser(req, options);
  return user ? { user, byHost: false } : null;
}

/** The user the host signs in for this request (`currentUser`), or `null`; reads nothing of the router's session. */
export async function findHostUser(req: Request, userAuth: UserAuth): Promise<AuthenticatedUser | null> {
  return userAuth.currentUser ? checkHostUser(await callHostHook('currentUser', () => userAuth.currentUser!(req)), 'currentUser') : null;
}
