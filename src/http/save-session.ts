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

/** What express-session's `reload` reports when the store no longer holds the session (destroyed, expired). */
const MISSING = 'failed to load session';

/**
 * Reads `req.session` again from its store, for a decision that must not rest on the copy this request loaded when it
 * began: another request (a sign-out, a "use another account", another instance) may have ended or changed it since.
 * Resolves false, and leaves the request without a session (so nothing of the old copy is saved back, nor its cookie
 * re-sent, when the response ends), when the store no longer has it.
 * @throws what the session store reports.
 */
export function reloadSession(req: Request): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => req.session.reload((err: unknown) => {
    if (!err) return resolve(true);
    if (err instanceof Error && err.message === MISSING) {
      (req as { session?: unknown }).session = undefined;
      return resolve(false);
    }
    reject(err);
  }));
}
