// Remembers which authorization request was sent to the host's login, to notice it coming back still signed out.
import type { Request } from 'express';
import { oauthSession } from './oauth-session.js';

// As long as a pending authorization request lives: a later return is a new attempt, not a loop.
const MAX_AGE_MS = 10 * 60 * 1000;

/** Notes that the browser is being sent to `loginUrl` for the authorization request with this query. */
export function markSentToHostLogin(req: Request, query: string): void {
  oauthSession(req).hostLogin = { query, at: Date.now() };
}

/**
 * True when the browser was sent to the host's login for this very authorization request (same query, within
 * ten minutes) and is back. The mark is used up either way, so it is only ever compared with the next request.
 */
export function takeHostLoginMark(req: Request, query: string): boolean {
  const data = oauthSession(req);
  const mark = data.hostLogin;
  if (!mark) return false;
  delete data.hostLogin;
  return mark.query === query && Date.now() - mark.at < MAX_AGE_MS;
}
