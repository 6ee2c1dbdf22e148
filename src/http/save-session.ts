// Writes the session to its store now, rather than when the response ends.
import type { Request } from 'express';

/**
 * Saves `req.session` and resolves once the store has it: for a change that must be seen by the next request that
 * loads the session (a new sign-in, a sign-out, an answered consent request) before this one goes on.
 * @throws what the session store reports.
 */
export function saveSession(req: Request): Promise<void> {
  return new Promise<void>((resolve, reject) => req.session.save((err: unknown) => (err ? reject(err) : resolve())));
}
