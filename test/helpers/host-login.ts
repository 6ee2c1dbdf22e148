// A host app's own login for the tests: the signed-in user is whatever the host wrote into its express-session.
import type { UserAuth } from '../../src/user-auth.js';

/**
 * A `UserAuth` of the host's login only (`currentUser` and `loginUrl`, no `verifyCredentials`): the user is the
 * session's `hostUser`, shown as `Host user <id>`; the login lives at `/account/login?return_to=…`.
 */
export function hostSessionUserAuth(): UserAuth {
  return {
    async currentUser(req) {
      const hostUser = (req.session as unknown as { hostUser?: string }).hostUser;
      return hostUser ? { id: hostUser, displayName: `Host user ${hostUser}` } : null;
    },
    loginUrl: (_req, returnTo) => `/account/login?return_to=${encodeURIComponent(returnTo)}`,
  };
}
