// Shutdown help: once draining, every response tells its client to close the connection and reconnect elsewhere.
import type { Server, ServerResponse } from 'node:http';

/**
 * Makes `server` answer `Connection: close` from the returned `drain()` on: on every response not yet started,
 * those of requests already in flight included, and on every request that arrives later on a kept-alive
 * connection. `server.close()` only stops new connections, so without this a busy keep-alive client is told
 * `keep-alive`, sends its next request on the same connection, and is cut mid-request (ECONNRESET) when the
 * remaining connections are closed by force; told `close`, it reconnects (to another instance, or is refused
 * cleanly) after its current response. Call before the server takes requests.
 * @see README "Housekeeping and shutdown" (requests in flight finish); RFC 9112 §9.6 (the close option).
 */
export function closeConnectionsOnDrain(server: Server): { drain(): void } {
  // Responses not finished yet, so that drain() can still mark the ones whose headers are not sent.
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  // Prepended: the app's own listener may answer synchronously, before a later listener could set a header.
  server.prependListener('request', (_req, res) => {
    if (draining) {
      res.setHeader('Connection', 'close');
      return;
    }
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  return {
    drain() {
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      inFlight.clear();
    },
  };
}
