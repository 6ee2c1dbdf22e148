// Whether the user signed in now is another than the one the session's CSRF token and pending requests were made for.
import type { Request } from 'express';
import type { UserAuth } from '../user-auth.js';
import type { ResolvedOptions } from '../options.js';
import { findCurrentUser } from './current-user.js';
import { isSessionOf } from './session-owner.js';

/**
 * True when somebody is signed in who is not the user this session's CSRF token was made for (`bindSessionToUser`):
 * a host's login that signed another user in without regenerating its express-session keeps the router's data, token
 * included, until the next authorization request. A form shown to the first user then still carries a matching token,
 * but it is not the answer of the one signed in now: it is stale, as if its session had been replaced. Nobody signed in
 * (signed out meanwhile) is false: no other user can be answered for then. The binding is the one oidc-provider and
 * Spring Authorization Server keep between an interaction's consent state and its authenticated principal.
 * @throws what the host's `currentUser` throws (an outage), for the caller to answer.
 * @see RFC 6749 §10.12 (CSRF: the request is bound to the user-agent's authenticated state), RFC 6819 §4.4.1.8.
 */
export async function isSignedInAsAnother(req: Request, userAuth: UserAuth, options: ResolvedOptions): Promise<boolean> {
  const user = await findCurrentUser(req, userAuth, options);
  return user !== null && !isSessionOf(req, user);
}
