// The user-login contract: how a person is identified on the authorization page.
import type { Request } from 'express';

/** The person who signs in and grants consent (RFC 6749 §1.1 "resource owner"). */
export interface AuthenticatedUser {
  /** Stable id; tokens are bound to it. */
  readonly id: string;
  /** Shown on the consent page ("Signed in as …"). */
  readonly displayName: string;
}

/**
 * How the host app identifies users. Two ways in, both first-class:
 * 1. the package's own login page: implement `verifyCredentials` (passport-local runs over it);
 * 2. the host's existing login: implement `currentUser(req)` and `loginUrl(req, returnTo)`.
 *
 * @see RFC 6749 §3.1 ("the authorization server MUST first verify the identity of the resource owner").
 */
export interface UserAuth {
  /**
   * Checks a username and password. Resolve `null` for bad credentials; throw only on outages.
   * Store passwords with a slow hash (scrypt or better): this runs once per login, not per request.
   */
  verifyCredentials?(username: string, password: string): Promise<AuthenticatedUser | null>;
  /** The user the host app has signed in for this request, or `null`. */
  currentUser?(req: Request): Promise<AuthenticatedUser | null>;
  /**
   * Where to send the browser when nobody is signed in, when the host has its own login page. After login
   * the host sends the browser back to `returnTo` (a same-origin path), and the flow resumes there. A request
   * asking for a fresh sign-in (`prompt=login`, any `max_age`) is answered `login_required` instead: the router
   * cannot tell when the host signed the user in (OpenID Connect Core §3.1.2.1).
   */
  loginUrl?(req: Request, returnTo: string): string;
  /**
   * Where the host's own sign-out is (a path of this site, or an http(s) URL), for a user the host signed in
   * (`currentUser`): the connected-applications page links to it in place of the router's Sign out, which
   * cannot end the host's sign-in. Absent, that page offers no sign-out to such a user.
   */
  logoutUrl?(req: Request): string;
  /**
   * Re-checked when a code is exchanged or a token refreshed: `null` refuses tokens for a deleted user.
   * When absent, users are assumed to still exist.
   */
  findUser?(id: string): Promise<AuthenticatedUser | null>;
}
