// Remembers which authorization request was sent to the host's login, to notice it coming back still signed out.
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import { clearPageCookie, readPageCookie, writePageCookie } from './page-cookies.js';

// As long as a pending authorization request lives: a later return is a new attempt, not a loop.
const MAX_AGE_MS = 10 * 60 * 1000;

function digest(query: string): string {
  return createHash('sha256').update(query).digest('base64url').slice(0, 22);
}

/**
 * Notes that the browser is being sent to `loginUrl` for the authorization request with this query. The note
 * is a small cookie (when, and a digest of the request), not session data: a flood of signed-out requests
 * stores nothing on the server. SameSite=Lax, so that it comes back with the top-level redirect from a host
 * login on another site.
 */
export function markSentToHostLogin(res: Response, options: ResolvedOptions, query: string): void {
  writePageCookie(res, options, 'host-login', `${Date.now()}.${digest(query)}`, { sameSite: 'lax', maxAgeMs: MAX_AGE_MS });
}

/**
 * True when the browser was sent to the host's login for this very authorization request (same query, within
 * ten minutes) and is back. The mark is used up either way, so it is only ever compared with the next request.
 */
export function takeHostLoginMark(req: Request, res: Response, options: ResolvedOptions, query: string): boolean {
  const mark = readPageCookie(req, options, 'host-login');
  if (mark === undefined) return false;
  clearPageCookie(res, options, 'host-login');
  const [at, hash] = mark.split('.');
  const age = Date.now() - Number(at);
  return hash === digest(query) && age >= 0 && age < MAX_AGE_MS;
}
