// When the model counts a token or code as expired: by the window its request was sent and answered in.
import type { Known, MToken, Real, Window } from './model.js';

/** Clock tolerance between the test and the stores (one machine: PostgreSQL's and Redis's clocks are this one's). */
export const SLACK_MS = 50;

/**
 * Whether a thing issued within `issued` with `ttl` seconds has expired when checked within `at`. Tokens expire at a
 * whole second (issue-tokens.ts rounds up), codes at their millisecond.
 */
export function expiry(issued: Window, ttl: number, at: Window, wholeSecond: boolean): 'fresh' | 'expired' | 'unknown' {
  const earliest = issued[0] + ttl * 1000;
  const latest = wholeSecond ? Math.ceil((issued[1] + ttl * 1000) / 1000) * 1000 : issued[1] + ttl * 1000;
  if (at[1] < earliest - SLACK_MS) return 'fresh';
  if (at[0] > latest + SLACK_MS) return 'expired';
  return 'unknown';
}

/** Whether a token checked within `at` has expired, by its kind's lifetime. */
export function tokenExpiry(t: MToken, r: Real, at: Window): 'fresh' | 'expired' | 'unknown' {
  return expiry(t.issued, t.kind === 'access' ? r.ttl.access : r.ttl.refresh, at, true);
}

/** What the server must answer for a token checked within `at`: revoked or expired is dead, neither is live. */
export function effective(t: MToken, r: Real, at: Window): Known {
  if (t.state === 'dead') return 'dead';
  const e = tokenExpiry(t, r, at);
  if (e === 'expired') return 'dead';
  return t.state === 'live' && e === 'fresh' ? 'live' : 'unknown';
}
