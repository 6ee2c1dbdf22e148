// The answer to a browser back from the host's login still signed out: a clear page and one log line naming the fix.
import type { Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import type { PageContext } from './page-context.js';
import { hasRouterOwnSession } from '../http/session-middleware.js';
import { renderError } from './render.js';

type Diagnosis = 'no-host-session' | 'passport-after-router' | 'current-user-null';

const MOUNT_ORDER = 'app.use(session(…)); app.use(passport.initialize()); app.use(passport.session()); app.use(oauth.router)';
const MESSAGES: Record<Diagnosis, string> = {
  'no-host-session': 'express-oauth-router: a browser came back from loginUrl still signed out (currentUser returned null), '
    + 'and the request reached oauth.router without a req.session from your app. If your login uses express-session '
    + `and passport, mount oauth.router after them: ${MOUNT_ORDER}. If it keeps no express-session, check that `
    + 'currentUser(req) finds the user it signed in.',
  'passport-after-router': 'express-oauth-router: a browser came back from loginUrl still signed out: its session holds '
    + 'a passport login, but currentUser returned null, so passport.session() runs after oauth.router. Mount '
    + `oauth.router after your session and passport middleware: ${MOUNT_ORDER}.`,
  'current-user-null': 'express-oauth-router: a browser came back from loginUrl still signed out: currentUser(req) '
    + 'returned null. Check that your login signs the user in to the session this request carries and that '
    + 'currentUser reads the user from there (or the user did not sign in).',
};
// Each diagnosis is logged once per router: a wrong mount order fails every sign-in, and one line says it all.
const logged = new WeakMap<ResolvedOptions, Set<Diagnosis>>();

function diagnose(req: Request): Diagnosis {
  // Only the router's own session exists: the host's session middleware did not run before the router.
  if (hasRouterOwnSession(req)) return 'no-host-session';
  const passportData = (req as unknown as { session?: { passport?: { user?: unknown } } }).session?.passport;
  return passportData?.user !== undefined ? 'passport-after-router' : 'current-user-null';
}

/**
 * Stops the round trip between the authorization endpoint and the host's login: instead of sending the
 * browser to `loginUrl` again, shows a page saying signing in did not take, and logs (once per cause) what
 * was seen and the fix. The log line blames the mount order only when the request shows it: no session from
 * the host app at all, or a passport login in the session that currentUser did not see.
 * @see RFC 6749 §3.1 ("MUST first verify the identity of the resource owner"): without a user there is no
 *   consent to ask for, and no answer for the client yet, so the page is shown here rather than redirected.
 */
export function renderHostLoginLoop(req: Request, res: Response, context: PageContext): void {
  const diagnosis = diagnose(req);
  const seen = logged.get(context.options) ?? new Set<Diagnosis>();
  logged.set(context.options, seen);
  if (!seen.has(diagnosis)) {
    seen.add(diagnosis);
    context.options.logger.error(MESSAGES[diagnosis]);
  }
  // The page is the user's, in their language; the log line is the administrator's, in English as every log line is.
  renderError(res, context, 403, 'access_denied', { message: 'hostSignInLoop' });
}
