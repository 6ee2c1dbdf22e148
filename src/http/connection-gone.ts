// Whether a request's connection can still carry its answer: one the client reset or half-closed cannot.
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * True once the connection of `res` can no longer carry an answer: the client reset it, or half-closed it after its
 * request (Node's server, unless `httpAllowHalfOpen` is set, then aborts the request and ends the connection, and the
 * client never gets an answer). A response without a socket of its own (a serverless adapter's, a test double's) is
 * never gone. Asked before a token request spends a code or saves tokens, so that a client that gave up during the
 * secret check can send the same code again, and no token is saved for nobody.
 * @see RFC 9112 §9.6 (tear-down), RFC 6749 §4.1.2 (a code is used once).
 */
export function connectionGone(req: IncomingMessage, res: ServerResponse): boolean {
  const socket = res.socket ?? req.socket;
  return socket !== null && socket !== undefined && (socket.destroyed || socket.writableEnded);
}
