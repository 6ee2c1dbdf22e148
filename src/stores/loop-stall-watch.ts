// Tells a revocation feed that this process's event loop has just stalled (frozen, suspended or blocked), so notifications may sit unread.

/** How often the watch ticks, and the stall past which a feed stops vouching until the loop has turned. */
const TICK_MS = 100;
export const LOOP_STALL_MS = 1000;

/** A watch of the event loop's turns, for a revocation feed's `mark()`. */
export interface LoopStallWatch {
  /** True from the end of a stall longer than `LOOP_STALL_MS` until the loop has polled every socket once after it. */
  stalled(): boolean;
  /** Stops the timer. Idempotent. */
  stop(): void;
}

/**
 * A feed that hears revocations on a socket (PostgreSQL LISTEN, Redis pub/sub) counts one only once its socket has
 * been read. After the process was frozen (SIGSTOP, a serverless platform between invocations, a VM migrated, a
 * container restored, a debugger) or its loop blocked, a notification that arrived meanwhile and a request sent after
 * it both wait, and libuv's poll phase may read the request's socket first: epoll lists a socket it reported ready in
 * its last poll before any that became ready since, so a connection served just before the freeze (a serverless
 * platform freezes right after the response) is read before the feed (an audit: every request queued on such a
 * connection during a 2 s SIGSTOP, on Redis and PostgreSQL, was served with a token revoked before it was sent).
 * So a timer ticks every 100 ms: while its last tick is more than `LOOP_STALL_MS` old (frozen in the poll itself), and
 * from a tick that finds that gap until the poll phase after it has read every socket that was ready (a
 * setImmediate runs after that poll), the feed may hold unread notifications and must not vouch. Shorter stalls stay
 * within the feed's documented event-loop lag.
 * @see RFC 7009 §2.1, libuv src/unix/core.c (uv_run: timers, then uv__io_poll, then check)
 */
export function createLoopStallWatch(): LoopStallWatch {
  // The monotonic clock: a stall is a duration, and performance.now() moves while the process is stopped.
  let tickAt = performance.now();
  /** Stalls found by a tick whose next poll phase has not yet ended. */
  let catchingUp = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - tickAt > LOOP_STALL_MS) {
      // The rest of the stalled turn may have run before this tick: its sockets are read in the next poll phase.
      catchingUp += 1;
      setImmediate(() => {
        catchingUp -= 1;
      });
    }
    tickAt = now;
  }, TICK_MS);
  // The timer fails safe: a tick that comes late (a busy or frozen loop) leaves `tickAt` old, so `stalled()` answers
  // true and the feed vouches for less, never more; nothing is trusted because a tick came.
  timer.unref();
  return {
    stalled: () => catchingUp > 0 || performance.now() - tickAt > LOOP_STALL_MS,
    stop: () => clearInterval(timer),
  };
}
