// Starts the signed-in session at sign-in: a new session id carrying the user and nothing from before.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';
import { createRandomToken } from '../crypto/random-token.js';
import { clearOAuthSession, isOAuthSessionKey, oauthSession } from './oauth-session.js';
import { saveSession } from './save-session.js';
import { endSignIn } from './ended-sign-ins.js';
import type { ResolvedOptions } from '../options.js';

/**
 * Gives the session a new id and saves it, so the new cookie is in place before the redirect that follows. Of the
 * old session only the host app's own keys are kept (a host's express-session in front of the router); the
 * router's corner starts afresh with the user, a new CSRF token and no pending request, so that nothing an
 * attacker planted with a session cookie before the sign-in (a CSRF token, an authorization request for his
 * own integration) is honoured after it. The request being resumed travels in the redirect that follows;
 * `signedInFor` (its query) marks this sign-in as the re-authentication that request may ask for.
 *
 * The steps of express-session's `regenerate` in the other order: the new session is made (the store's `generate`,
 * express-session's own step, which puts the new id and Session on the request at once) and saved, and only then is the
 * old one destroyed. A host middleware may answer at any moment of the wait (connect-timeout's 503): regenerate's
 * order had it answer during the destroy with the old id, so the browser kept a cookie naming a deleted session, signed
 * out and, in a host's shared session, without the host's data. Now an answer before the new session exists carries
 * the old, still live, id (the caller starts no sign-in once the host answered), and one after carries the new id,
 * whose session express-session saves before it ends that answer. The old id is destroyed in every path that signs in;
 * a store that fails the save or the destroy leaves nobody signed in (the caller shows the outage page).
 * @see RFC 6819 §4.4.1.4, RFC 6749 §10.12; OWASP Session Management (a new id whenever the privilege changes).
 */
export async function startSignedInSession(
  req: Request, options: ResolvedOptions, user: AuthenticatedUser, now = Date.now(), signedInFor?: string,
): Promise<void> {
  const session = req.session;
  const replaced = req.sessionID;
  // The id being replaced: a copy of it that a request loaded before writes back is no sign-in (ended-sign-ins.ts).
  endSignIn(req, options, now);
  const hostData: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(session)) if (key !== 'cookie' && !isOAuthSessionKey(req, key)) hostData[key] = value;
  // express-session sets `generate` on every store it is given; a session middleware that only looks like it may not,
  // and has its regenerate (destroy, then generate) instead.
  const store = (req as Partial<Pick<Request, 'sessionStore'>>).sessionStore;
  const generated = typeof store?.generate === 'function';
  if (generated) store.generate(req);
  else await new Promise<void>((resolve, reject) => session.regenerate((err: unknown) => (err ? reject(err) : resolve())));
  try {
    await fillSignedInSession(req, hostData, user, now, signedInFor);
    // Through req.sessionStore: the router's own store is guarded there, so a copy written back later is dropped (ended-sessions.ts).
    if (generated) await new Promise<void>((resolve, reject) => store!.destroy(replaced, (err: unknown) => (err ? reject(err) : resolve())));
  } catch (err) {
    // The store failed (an outage): no sign-in, as the outage page says and no login.succeeded reports. The answer that
    // page is saves the new session as it stands when it ends: the host's keys, without the router's sign-in. That save
    // may fail too, leaving the sign-in saved before a failed destroy under the id the browser now holds: it is ended
    // here as well, so this process never takes that copy for a sign-in.
    clearOAuthSession(req);
    endSignIn(req, options, now);
    throw err;
  }
}

/** Puts the host's keys and the new sign-in in the new `req.session`, and saves it. */
async function fillSignedInSession(
  req: Request, hostData: Record<string, unknown>, user: AuthenticatedUser, now: number, signedInFor: string | undefined,
): Promise<void> {
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
