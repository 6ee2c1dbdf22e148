// Reads the client's address while its connection is open, so what the request did is reported with it after a hang-up.
import type { IncomingMessage } from 'node:http';
import type { OAuthEvents } from '../events/oauth-events.js';

/**
 * Has Node note the connection's peer address now, when the request arrives. Node asks the operating system for
 * it only when read, and keeps it once read; read first after the client has closed the connection, it is
 * `undefined`, and `req.ip` with it: a token issued, a code replayed or a failed authentication for a client that
 * hung up before its answer (RFC 9112 §9.6) was reported with `ip: null`. Only while someone hears the events:
 * otherwise nothing reads the address of a request that is still being answered.
 * @see RFC 9700 §4.14 (audit events name their source), RFC 6819 §5.1.4.1.1.
 */
export function keepPeerAddress(req: IncomingMessage, events: OAuthEvents): void {
  if (events.active) void req.socket.remoteAddress;
}
