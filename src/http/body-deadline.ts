// The deadline for a request body to finish arriving: an I/O bound on a socket, not protocol logic.
import type { Request } from 'express';

/**
 * Calls `onExpire` if the body of `req` has not been read in full `seconds` from now; returns the function that
 * cancels the deadline (call it once the body is read or refused). A whole-body deadline, not an idle one: a
 * body that trickles in a byte at a time is cut off as surely as one that stops. The timer keeps no process
 * alive and decides nothing about who gets a token: it only ends a read that would otherwise wait for Node's
 * `server.requestTimeout` (5 minutes by default).
 * @see RFC 9110 §15.5.9 (408 Request Timeout: "the server … wishes to close the connection").
 */
export function startBodyDeadline(req: Request, seconds: number, onExpire: () => void): () => void {
  if (req.readableEnded) return () => {};
  const timer = setTimeout(onExpire, seconds * 1000);
  timer.unref();
  return () => clearTimeout(timer);
}
