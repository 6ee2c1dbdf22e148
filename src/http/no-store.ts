// Cache-Control: no-store on every answer of the HTML routes, redirects included.
import type { NextFunction, Request, Response } from 'express';

/**
 * Marks every response of the login, consent and consents routes as not storable, before the handler runs:
 * pages (sendPage sets the same), and above all the redirects that carry an authorization code or an error
 * to the client, which a shared or browser cache must never keep or replay.
 * @see RFC 6749 §10.5 (codes are short-lived, single-use secrets), RFC 9700 §4.2.4 (leaks through caches and
 * history), RFC 9111 §5.2.2.5 (no-store).
 */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  next();
}
