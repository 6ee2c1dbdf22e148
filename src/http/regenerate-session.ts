// Starts the signed-in session at sign-in: a new session id carrying the user and nothing from before.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';
import { createRandomToken } from '../crypto/random-token.js';
import { isOAuthSessionKey, oauthSession } from './oauth-session.js';
import { saveSession } from './save-session.js';
import { endSignIn } from './ended-sign-ins.js';
import type { ResolvedOptions } from '../options.js';

/**
 * Regenerates the session id and saves, so the new cookie is in place before the redirect that follows. Of the
 * old session only the host app's own keys are kept (a host's express-session in front of the router); the
 * router's corner starts afresh with the user, a new CSRF token and no pending request, so that nothing an
 * attacker planted with a session cookie before the sign-in (a CSRF token, an authorization request for his
 * own integration) is honoured after it. The request being resumed travels in the redirect that follows;
 * `signedInFor` (its query) marks this sign-in as the re-authentication that request may ask for.
 * @see RFC 6819 §4.4.1.4, RFC 6749 §10.12; OWASP Session Management (a new id whenever the privilege changes).
 */
export async function startSignedInSession(
  req: Request, options: ResolvedOptions, user: AuthenticatedUser, now = Date.now(), signedInFor?: string,
): Promise<void> {
  const session = req.session;
  // The id being replaced: a copy of it that a request loaded before writes back is no sign-in (ended-sign-ins.ts).
  endSignIn(req, options, now);
  const hostData: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(session)) if (key !== 'cookie' && !isOAuthSessionKey(req, key)) hostData[key] = value;
  await new Promise<void>((resolve, reject) => session.regenerate((err: unknown) => (err ? reject(err) : resolve())));
  Object.assign(req.session, hostData);
  Object.assign(oauthSession(req), {
    user: { id: user.id, displayName: user.displayName },
    userId: user.id,
    signedInAt: now,
    lastSeenAt: now,
    csrf: createRandomToken(),
    ...(signedInFor === undefined ? {} : { signedInFor: { query: signedInFor, at: now } }),
  });
  await saveSession(req);
}
