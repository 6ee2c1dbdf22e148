// A user handed over by the host (currentUser, verifyCredentials) is checked once, before its id reaches a store.
import type { AuthenticatedUser } from '../user-auth.js';
import { isStoreId } from '../stores/store-policy.js';

/**
 * `user` as given, or a TypeError naming the hook when its `id` is not an id every store keeps (`isStoreId`:
 * 1 to 255 characters, no control characters): a host bug, answered 500 and logged, rather than a NUL byte
 * sent to PostgreSQL on every request of that user.
 * @throws TypeError naming `hook`.
 * @see RFC 6749 §3.1 (the resource owner's identity), SPEC §5 (tokens are bound to the user).
 */
export function checkHostUser<T extends AuthenticatedUser | null | undefined>(user: T, hook: string): T {
  if (user && !isStoreId(user.id)) {
    throw new TypeError(`express-oauth-router: userAuth.${hook} returned a user whose id is not 1-255 characters without control characters`);
  }
  return user;
}
