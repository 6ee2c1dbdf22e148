// The error a bcrypt check rejects with when its worker thread stopped or could not start: a server fault, not a wrong secret.

/**
 * The worker thread that checks imported bcrypt secrets stopped (an uncaught error, out of memory, terminated) before
 * answering a check, hung (answered none of its checks for 10 s, and was ended), or could not start. The check's answer is unknown, so the request is a server fault: the router
 * answers 500 `server_error` and logs `unexpected BcryptWorkerError: <message>` (the `logger` option, throttled per
 * kind), and the client-authentication limit does not count it. The message names the worker's exit, never the
 * secret or the hash.
 * @see RFC 6749 §5.2 (`server_error` via 500, §4.1.2.1), RFC 6819 §5.1.4.2.3 (a limit must not lock a client out).
 */
export class BcryptWorkerError extends Error {
  override readonly name = 'BcryptWorkerError';
}
