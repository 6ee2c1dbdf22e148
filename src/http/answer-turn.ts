// Waits for a pipelined request's turn to be answered, so requests on one connection take effect in the order sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Node's own mark of the response it is writing on a connection (`_http_server.js`), read only, never set. */
type ConnectionSocket = { readonly _httpMessage?: unknown };

/**
 * The requests waiting for their turn on each connection, told when it closes: one `close` listener per connection
 * however many requests are pipelined on it (Node warns past ten listeners on one emitter).
 */
const waiting = new WeakMap<Socket, Set<() => void>>();

function onConnectionClose(socket: Socket, settle: () => void): () => void {
  let settles = waiting.get(socket);
  if (settles === undefined) {
    const all = new Set<() => void>();
    settles = all;
    waiting.set(socket, all);
    socket.once('close', () => { waiting.delete(socket); for (const each of [...all]) each(); });
  }
  settles.add(settle);
  return () => { settles.delete(settle); };
}

/**
 * `true` when `res` is the answer Node writes next on its connection, as for every request not pipelined behind
 * another: then at once, without a promise. For a request pipelined behind one not yet answered, a promise of `true`
 * once the answers before it are out (Node hands `res` the socket), or of `false` when the connection closes first:
 * an answer before it closed the connection (a refused body's `Connection: close`) or the client left, and whatever
 * this request did would be answered to nobody. Node runs pipelined requests side by side: without this, a token
 * request sent behind a refused one issued tokens nobody received (an authorization code spent with them), and an
 * introspection sent behind a revocation of the same token could answer `active: true`. The connection is watched,
 * not the request: Node closes a request (`close`, `destroyed`) as soon as its body has been read, by a host's body
 * parser before the router say, while its answer is still to come; taken as the connection's end, that request was
 * never answered and the connection hung. A response Node did not make for a connection (a serverless adapter's, a
 * test double's) has no such mark and is never held.
 * @see RFC 9112 §9.3.2 ("A server MAY process a sequence of pipelined requests in parallel if they all have safe
 * methods"; these are POSTs), §9.6 (a server that closes after a response does not process later requests).
 */
export function answerTurn(req: IncomingMessage, res: ServerResponse): true | Promise<boolean> {
  if (res.socket) return true;
  const socket = req.socket as (IncomingMessage['socket'] & ConnectionSocket) | null | undefined;
  const current = socket?._httpMessage;
  // No answer of Node's ahead of this one on the connection: nothing to wait for.
  if (!socket || current === undefined || current === null || current === res) return true;
  if (socket.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const settle = (): void => {
      res.off('socket', settle);
      stopWatching();
      resolve(res.socket !== null && !res.socket.destroyed);
    };
    res.once('socket', settle);
    const stopWatching = onConnectionClose(socket, settle);
  });
}
