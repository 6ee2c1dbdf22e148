// Ends the router's own sign-in for this browser: the sign-out form's and the consent page's "use another account".
import type { Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import { clearOAuthSession } from './oauth-session.js';
import { hasRouterOwnSession } from './session-middleware.js';
import { sessionCookieName } from './page-cookies.js';
import { saveSession } from './save-session.js';
import { endSignIn } from './ended-sign-ins.js';
import { answeredByHost } from './answered-by-host.js';

/**
 * Destroys the router's own session and clears its cookie; in a host's express-session, removes only the router's
 * data (the host's sign-in is the host's to end). Resolves once the session store has the change, so the next
 * request of this browser finds nobody signed in.
 * @throws what the session store reports.
 * @see RFC 6819 §5.1.5.3 (session lifetime), RFC 6749 §3.1 (the resource owner's identity is verified anew).
 */
export async function endRouterSignIn(req: Request, res: Response, options: ResolvedOptions): Promise<void> {
  // Before the store is asked: a copy another request writes back meanwhile is over too.
  endSignIn(req, options);
  if (hasRouterOwnSession(req)) {
    await new Promise<void>((resolve, reject) => req.session.destroy((err: unknown) => (err ? reject(err) : resolve())));
    // Not once the host answered while the store destroyed it (connect-timeout's 503): the header would throw, logged as
    // an unexpected error. The session is gone all the same; the cookie left names nothing.
    if (!answeredByHost(res)) res.clearCookie(sessionCookieName(options), { path: '/', httpOnly: true, sameSite: 'lax', secure: options.main.secure });
  } else {
    clearOAuthSession(req);
    await saveSession(req);
  }
}
