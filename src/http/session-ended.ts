// Tells a page form's session that ended (signed out, expired) from one replaced by another sign-in.
import type { Request } from 'express';
import type { UserAuth } from '../user-auth.js';
import type { ResolvedOptions } from '../options.js';
import { readOAuthSession } from './oauth-session.js';
import { findSignIn } from './current-user.js';
import { toOAuthError } from './to-oauth-error.js';

/**
 * Whether the session a form was made in has ended (sign-out, idle timeout), for a POST whose CSRF token no longer
 * matches, rather than been replaced by another sign-in. A session holding the router's token was replaced: the
 * router's own sign-in starts one with a new token. One without it ended, unless somebody is signed in now: a host's
 * login (passport's `req.login`, any login that regenerates its express-session as OWASP asks) starts a session without
 * the router's data, so the token is gone though the browser is signed in, as another user or again. That is the exact
 * line the answers need: with somebody signed in, the authorization request asked again shows a consent page, whose
 * Deny needs no sign-in; with nobody, it would meet a sign-in (the host's has no Cancel). A host hook that fails is
 * logged as anywhere else and counts as nobody signed in: the answer to an ended session needs no user.
 * @see RFC 6749 §10.12 (CSRF), RFC 6819 §4.4.1.4 (a new session at sign-in); README, the consent form's CSRF token.
 */
export async function isSessionEnded(req: Request, userAuth: UserAuth, options: ResolvedOptions): Promise<boolean> {
  if (readOAuthSession(req)?.csrf !== undefined) return false;
  try {
    return (await findSignIn(req, userAuth, options)) === null;
  } catch (err) {
    toOAuthError(err, options);
    return true;
  }
}
