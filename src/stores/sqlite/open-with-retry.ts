// Opening a SQLite file that other processes open at the same moment: retry what SQLite refuses at once.
import { isLockBusy } from './errors.js';
import { monotonicMs } from './lock-wait.js';

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs the opening steps (switching to WAL, migrating) again while they meet a lock, up to `timeoutMs`.
 * SQLite's busy handler covers most waits, but not all: two connections that both hold a shared lock and both
 * want the exclusive one (two processes switching a new file to WAL together) get SQLITE_BUSY at once, since
 * waiting would deadlock. One of them then retries after the other finished. Opening runs before the store
 * serves, so this short synchronous pause blocks no request.
 * @throws the last lock error once `timeoutMs` has passed, or any other error at once.
 * @see RFC 6749 §5.2 (`temporarily_unavailable` is what a store that cannot open leads to).
 */
export function openWithRetry<T>(timeoutMs: number, steps: () => T): T {
  const deadline = monotonicMs() + timeoutMs;
  for (let pauseMs = 5; ; pauseMs = Math.min(pauseMs * 2, 100)) {
    try {
      return steps();
    } catch (err) {
      const remaining = deadline - monotonicMs();
      if (!isLockBusy(err) || remaining <= 0) throw err;
      Atomics.wait(PAUSE, 0, 0, Math.min(pauseMs, remaining));
    }
  }
}
