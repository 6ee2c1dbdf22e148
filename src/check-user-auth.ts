// Fails fast at start-up when a UserAuth cannot sign anybody in.
import type { UserAuth } from './user-auth.js';

/**
 * A UserAuth needs `verifyCredentials` (the router's login page) or `currentUser` with `loginUrl`
 * (the host's own login).
 * @throws TypeError saying what is missing.
 */
export function checkUserAuth(userAuth: UserAuth): void {
  if (userAuth === null || typeof userAuth !== 'object') throw new TypeError('express-oauth-router: userAuth must be an object');
  for (const key of ['verifyCredentials', 'currentUser', 'loginUrl', 'logoutUrl', 'findUser'] as const) {
    if (userAuth[key] !== undefined && typeof userAuth[key] !== 'function') {
      throw new TypeError(`express-oauth-router: userAuth.${key} must be a function`);
    }
  }
  const ownLogin = typeof userAuth.verifyCredentials === 'function';
  const hostLogin = typeof userAuth.currentUser === 'function' && typeof userAuth.loginUrl === 'function';
  if (!ownLogin && !hostLogin) {
    throw new TypeError('express-oauth-router: userAuth needs verifyCredentials, or currentUser and loginUrl');
  }
}
