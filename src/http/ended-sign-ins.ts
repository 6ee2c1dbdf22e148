// Remembers when this process ended the router's sign-in in a session, so that a copy written back later is not taken for one.
import type { Request } from 'express';
import type { ResolvedOptions } from '../options.js';
import { sessionCookieName } from './page-cookies.js';

/** Most sessions remembered; past it the oldest go first (each sign-in and sign-out adds one). */
const MAX_ENDED = 10_000;

/** Session id and router (its cookie name) → when that router's sign-in in it ended, and until when that is remembered (epoch ms). */
const ended = new Map<string, { readonly at: number; readonly until: number }>();

/**
 * Records that the router's sign-in in this request's session ends now (a sign-out, a "use another account", or the session a new
 * sign-in replaces). In a host's express-session the router cannot keep the host's store from being written: a request
 * of that session loaded before (another tab, a stolen cookie's requests) saves its copy, the router's sign-in included,
 * when it ends. `signInEndedAt` then tells such a copy from a sign-in made since. Remembered for `session.absoluteTtl`
 * (past which the copy's sign-in has expired anyway), at most MAX_ENDED sessions. Kept per router (its cookie name, which
 * keys its data in a host's session), so a sign-out at one router behind a host's session leaves another's sign-in alone.
 * @see RFC 6819 §5.1.5.3 (session lifetime), OWASP Session Management Cheat Sheet (a sign-out ends the session on the server).
 */
export function endSignIn(req: Request, options: ResolvedOptions, now = Date.now()): void {
  const key = keyOf(req, options);
  if (key === null) return;
  ended.delete(key);
  ended.set(key, { at: now, until: now + options.session.absoluteTtl * 1000 });
  // Insertion order is the order of ending: the oldest are first.
  for (const [id, mark] of ended) {
    if (ended.size <= MAX_ENDED && mark.until > now) break;
    ended.delete(id);
  }
}

/** The session's key here: its id and the router's cookie name; `null` without a session id. */
function keyOf(req: Request, options: ResolvedOptions): string | null {
  const sid: unknown = (req as { sessionID?: unknown }).sessionID;
  return typeof sid === 'string' ? `${sessionCookieName(options)}\n${sid}` : null;
}

/** When this process ended this router's sign-in in the request's session, or `null`: a sign-in made at or before it is over. */
export function signInEndedAt(req: Request, options: ResolvedOptions, now = Date.now()): number | null {
  const key = keyOf(req, options);
  const mark = key === null ? undefined : ended.get(key);
  return mark !== undefined && mark.until > now ? mark.at : null;
}
