// Whether an answer carried the session cookie of the request's express-session (after a sign-in, its new id).
import type { Request, Response } from 'express';

/**
 * True when a `Set-Cookie` of `res` holds the signed id of `req.session` (express-session writes `s:<id>.<signature>`,
 * URI-encoded), or when there is no session id to look for. Read once the answer's headers are written: express-session
 * decides in its header hook, and leaves a `cookie.secure` cookie out on a request it does not judge secure (behind a TLS
 * proxy, only with Express's `trust proxy` or its own `proxy: true`), with nothing but a debug line. The sign-in then
 * lives in a session no browser will send again.
 * @see RFC 6265 §4.1.2.5 (Secure), RFC 6819 §4.4.1.4 (a new session id at sign-in).
 */
export function sessionCookieSent(req: Request, res: Response): boolean {
  const id = (req as { sessionID?: unknown }).sessionID;
  if (typeof id !== 'string' || id === '') return true;
  const signed = encodeURIComponent(`s:${id}.`);
  const header = res.getHeader('set-cookie');
  const lines = Array.isArray(header) ? header : header === undefined ? [] : [String(header)];
  return lines.some((line) => line.includes(`=${signed}`));
}
