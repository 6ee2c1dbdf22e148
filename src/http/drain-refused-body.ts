// Reads and discards the rest of a refused request body before its answer, so a proxy still sending it reads the answer.
import type { IncomingMessage } from 'node:http';

/**
 * The most of a refused body read and thrown away: nginx's default `client_max_body_size` (1 MiB), the largest body
 * a reverse proxy in its default setup passes on. A larger one is answered at once, as before.
 */
export const DRAIN_LIMIT_BYTES = 1024 * 1024;

/** How long the rest of a refused body may take to arrive before the answer goes out anyway. */
export const DRAIN_MS = 2000;

/**
 * Calls `answer` once the rest of `req`'s body has arrived and been discarded; at once when it has already, or when
 * its declared length is over DRAIN_LIMIT_BYTES; otherwise after DRAIN_LIMIT_BYTES more bytes or DRAIN_MS, whichever
 * comes first. A refused body's answer closes the connection: closed while the body still arrives, the socket is
 * reset, and a proxy writing the body (nginx sends it whole, then reads) gets EPIPE and answers 502 in place of the
 * router's 400 or 413 (and counts a failure against the instance). Nothing read here is kept.
 * @see RFC 9112 §9.6 (close in stages: "the reset packet might erase the client's unacknowledged input buffers").
 */
export function drainRefusedBody(req: IncomingMessage, answer: () => void): void {
  if (req.readableEnded || req.complete || req.destroyed || Number(req.headers['content-length']) > DRAIN_LIMIT_BYTES) {
    answer();
    return;
  }
  let discarded = 0;
  let answered = false;
  const finish = (): void => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', finish);
    req.off('close', finish);
    answer();
  };
  const onData = (chunk: Buffer | string): void => {
    discarded += chunk.length;
    if (discarded > DRAIN_LIMIT_BYTES) finish();
  };
  const timer = setTimeout(finish, DRAIN_MS);
  timer.unref();
  req.on('data', onData);
  req.once('end', finish);
  req.once('close', finish);
  req.resume();
}
