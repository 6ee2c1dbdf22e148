// Gives the session a new id at sign-in (session fixation), keeping its data: host data and pending requests.
import type { Request } from 'express';

/**
 * Regenerates the session id and copies the old data over, then saves, so the new cookie is in place before
 * the redirect that follows.
 * @see RFC 6819 §4.4.1.4 / OWASP session fixation: a new id whenever the privilege level changes.
 */
export async function regenerateSession(req: Request): Promise<void> {
  const session = req.session;
  const saved: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(session)) if (key !== 'cookie') saved[key] = value;
  await new Promise<void>((resolve, reject) => session.regenerate((err: unknown) => (err ? reject(err) : resolve())));
  Object.assign(req.session, saved);
  await new Promise<void>((resolve, reject) => req.session.save((err: unknown) => (err ? reject(err) : resolve())));
}
