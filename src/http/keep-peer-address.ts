// Reads the client's address while its connection is open, so what the request did is reported and counted with it after a hang-up.
import type { IncomingMessage } from 'node:http';
import type { OAuthEvents } from '../events/oauth-events.js';

/**
 * Has Node note the connection's peer address now, when the request arrives. Node asks the operating system for
 * it only when read, and keeps it once read; read first after the client has closed the connection, it is
 * `undefined`, and `req.ip` with it: a token issued, a code replayed or a failed authentication for a client that
 * hung up before its answer (RFC 9112 §9.6) was reported with `ip: null`, and a failure a rate limit counted after
 * the hang-up went to the source `unknown`, shared by every client that hung up, not to its address. So it is read
 * while someone hears the events, or when `counted`: a limit counts this request by its source (the sign-in and
 * client-authentication limits, which count only once the check failed). Otherwise nothing reads the address of a
 * request that is still being answered.
 * @see RFC 9700 §4.14 (audit events name their source), RFC 6819 §5.1.4.1.1, §4.3.5 (limits count per source).
 */
export function keepPeerAddress(req: IncomingMessage, events: OAuthEvents, counted: boolean): void {
  if (counted || events.active) void req.socket.remoteAddress;
}
