// Whether the host's middleware has answered, or is answering, a request the router is still working on.
import type { Response } from 'express';

/**
 * True once the response is sent, or once connect-timeout (mounted before the router) has timed the request out:
 * it then hands the request to the host's error handlers, whose answer (Express's own waits for the body) must be
 * the only one. connect-timeout asks every middleware after it to check `req.timedout`; the router cannot
 * be split by the host's `haltOnTimedout`, so it checks for itself. Writing anyway threw (a header after the
 * answer), an unhandled rejection that ended the process, or made Express's answer throw after the router's.
 * @see RFC 9110 §15.6.4 (503: the host's answer).
 */
export function answeredByHost(res: Response): boolean {
  return res.headersSent || (res.req as { timedout?: unknown } | undefined)?.timedout === true;
}

/** `res.redirect(status, location)`, unless the host has answered (answeredByHost). */
export function redirect(res: Response, status: number, location: string): void {
  if (!answeredByHost(res)) res.redirect(status, location);
}
