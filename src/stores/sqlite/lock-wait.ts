// Waiting for another process's SQLite lock without blocking the event loop: retry on a timer up to a deadline, then 503.
import { channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { isLockBusy, toStoreError } from './errors.js';

/**
 * Attempts made 1 ms apart before the delays grow. The lock's usual holder is another instance on the same file
 * (node:cluster, pm2 in cluster mode): its commits hold it well under a millisecond each, but back to back under
 * load, so a waiting process meets it on about half its attempts. A delay that grew with every miss (1, 2, 5, 10,
 * 20, 50 ms) then let one process idle for tens to hundreds of milliseconds while the other committed, its queued
 * token requests with it (bench/sqlite-shared-file.js, BENCHMARKS.md "fortieth pass").
 */
const STEADY_ATTEMPTS = 20;

/**
 * Delays after the steady attempts, in ms: a lock held that long is one CLI statement, a backup or a large
 * revocation, and is then tried 20 times a second at most (a failed attempt costs a few microseconds).
 */
const BACKOFF_MS = [2, 5, 10, 20, 50];

/** What `express-oauth-router:sqlite:lock-wait` subscribers receive at each attempt that met a lock. */
export interface SqliteLockWaitMessage {
  /** Attempts so far that met the lock (1 at the first). */
  readonly attempt: number;
  /** Store calls waiting behind this attempt (several for a group commit). */
  readonly calls: number;
}

/**
 * Published at every attempt that met another connection's lock, before waiting: hosts may count lock waits
 * (node:diagnostics_channel, free when nobody subscribes); tests learn that a call is waiting without a timer.
 * @see RFC 6749 §5.2 (`temporarily_unavailable` once the wait is over).
 */
export const sqliteLockWaitChannel = channel('express-oauth-router:sqlite:lock-wait');

/** Lock waiting of one store: its deadline and the runner of single operations. @see RFC 6749 §5.2. */
export interface SqliteLockWait {
  /** How long, in ms, a call waits for a lock before it rejects with StoreUnavailableError. */
  readonly timeoutMs: number;
  /**
   * Runs a synchronous better-sqlite3 operation at once and, while it meets a lock (SQLITE_BUSY or
   * SQLITE_LOCKED: the operation did nothing; a transaction was rolled back whole), again on a timer until
   * it succeeds or `timeoutMs` has passed since the call. Only lock errors are retried.
   */
  readonly run: <T>(operation: () => T) => Promise<T>;
}

/** Monotonic milliseconds: a deadline must not move with the wall clock. */
export const monotonicMs = (): number => performance.now();

/**
 * The delay before the next attempt: the backoff step, but never past the deadline, so that the last
 * attempt is made at the deadline itself.
 */
export function nextLockDelay(failedAttempts: number, remainingMs: number): number {
  const step = failedAttempts <= STEADY_ATTEMPTS
    ? 1
    : BACKOFF_MS[Math.min(failedAttempts - STEADY_ATTEMPTS, BACKOFF_MS.length) - 1]!;
  return Math.max(0, Math.min(step, remainingMs));
}

/** Tells subscribers that `calls` store calls meet a lock for the `attempt`-th time. */
export function publishLockWait(attempt: number, calls: number): void {
  if (sqliteLockWaitChannel.hasSubscribers) sqliteLockWaitChannel.publish({ attempt, calls } satisfies SqliteLockWaitMessage);
}

/** The rejection of a call whose lock wait ran out: a StoreUnavailableError with the lock error as cause. */
export function lockTimeoutError(err: unknown, timeoutMs: number): unknown {
  return toStoreError(err, ` after waiting ${timeoutMs} ms for another connection's lock`);
}

/** Runs `retry` after `delay` ms, or in the next turn of the event loop for 0. */
export function later(delay: number, retry: () => void): void {
  if (delay > 0) setTimeout(retry, delay);
  else setImmediate(retry);
}

/**
 * Creates the lock waiting of a store whose connection has `busy_timeout = 0`: SQLite then reports a lock
 * at once instead of sleeping inside the synchronous driver call, which would stop every route of the
 * process (the metadata document too) for as long as another process holds the lock.
 * @see RFC 6749 §4.1.2.1, §5.2 (`temporarily_unavailable`), RFC 9110 §15.6.4 (503).
 */
export function createLockWait(timeoutMs: number): SqliteLockWait {
  return {
    timeoutMs,
    run<T>(operation: () => T): Promise<T> {
      const deadline = monotonicMs() + timeoutMs;
      let failed = 0;
      return new Promise<T>((resolve, reject) => {
        const attempt = (): void => {
          try {
            resolve(operation());
          } catch (err) {
            const remaining = deadline - monotonicMs();
            if (!isLockBusy(err)) reject(toStoreError(err));
            else if (remaining <= 0) reject(lockTimeoutError(err, timeoutMs));
            else {
              failed += 1;
              publishLockWait(failed, 1);
              later(nextLockDelay(failed, remaining), attempt);
            }
          }
        };
        attempt();
      });
    },
  };
}

/** What `lockWaitSteps` gives back when the store closed while it waited. */
export const LOCK_WAIT_CLOSED = Symbol('closed');

/**
 * `run`'s waiting for a caller that paces itself (the sweep, a generator whose steps the sweep loop runs): runs
 * `operation`, and while it meets another connection's lock yields the delay before the next attempt (the same delays,
 * published the same way), up to `timeoutMs` from the first miss, then throws StoreUnavailableError. Gives back
 * `LOCK_WAIT_CLOSED` when `isOpen()` turned false during a wait. Not `run` itself: a generator on every store call
 * would cost the hot path. @see RFC 6749 §5.2.
 */
export function* lockWaitSteps<T>(operation: () => T, timeoutMs: number, isOpen: () => boolean): Generator<number, T | typeof LOCK_WAIT_CLOSED> {
  let failed = 0;
  let deadline = 0;
  for (;;) {
    try {
      return operation();
    } catch (err) {
      if (!isLockBusy(err)) throw toStoreError(err);
      if (failed === 0) deadline = monotonicMs() + timeoutMs;
      const remaining = deadline - monotonicMs();
      if (remaining <= 0) throw lockTimeoutError(err, timeoutMs);
      failed += 1;
      publishLockWait(failed, 1);
      yield nextLockDelay(failed, remaining);
      if (!isOpen()) return LOCK_WAIT_CLOSED;
    }
  }
}
