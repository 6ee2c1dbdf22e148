// Group commit for the SQLite store: token writes of one event-loop turn share one transaction.
import type { SqliteConnection } from './driver.js';
import { isLockBusy, toStoreError } from './errors.js';
import { later, lockTimeoutError, monotonicMs, nextLockDelay, publishLockWait, type SqliteLockWait } from './lock-wait.js';

interface Pending<A extends unknown[], R> {
  readonly args: A;
  /** Monotonic ms after which a call still meeting a lock is answered 503. */
  readonly deadline: number;
  resolve(value: R): void;
  reject(reason: unknown): void;
}

type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Wraps a write so that calls made in the same event-loop turn commit together: one `BEGIN IMMEDIATE … COMMIT`
 * (one WAL append of the shared pages) instead of one per call, which is what a token endpoint under load
 * spends most of its SQLite time on. Each call still runs in its own savepoint (a nested better-sqlite3
 * transaction), so one failing call rolls back alone and the others commit; if the commit itself fails,
 * every call of the batch is rejected and nothing of it is written.
 * Calls keep their order, and everything a call does (for `saveTokens`: its tombstone checks, then its
 * inserts) runs inside the batch transaction, which holds SQLite's write lock from `BEGIN IMMEDIATE` to
 * `COMMIT`. A revocation is a write transaction of its own, so it commits wholly before the batch (whose
 * checks see its tombstone) or wholly after it (and deletes what the batch saved), never between one
 * call's check and its insert. Each call resolves with its own result.
 *
 * When another connection holds the lock, the whole batch is rolled back (a lock met inside one call's
 * savepoint aborts the batch too: nothing of it is written) and run again on a timer, calls made meanwhile
 * joining behind it; a call still meeting the lock at its deadline (`lockWait.timeoutMs` after it was made)
 * is rejected with StoreUnavailableError and never written. Every call is answered exactly once.
 * @see DESIGN §3a (one store round trip per step), contract `TokenStore.saveTokens` (all or nothing).
 */
export function createGroupCommit<A extends unknown[], R>(
  db: SqliteConnection,
  lockWait: SqliteLockWait,
  write: (...args: A) => R,
): (...args: A) => Promise<R> {
  const one = db.transaction(write);
  let queue: Pending<A, R>[] = [];
  let scheduled = false;
  let failed = 0;

  const flushAll = db.transaction((batch: Pending<A, R>[]) => {
    const outcomes: Outcome<R>[] = [];
    for (const item of batch) {
      try {
        outcomes.push({ ok: true, value: one(...item.args) });
      } catch (error) {
        // Rethrown: the batch rolls back whole and is retried, rather than this call alone failing.
        if (isLockBusy(error)) throw error;
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  });

  function schedule(delay: number): void {
    scheduled = true;
    later(delay, flush);
  }

  /** Answers the calls past their deadline, keeps the others at the head of the queue and retries later. */
  function waitForLock(batch: Pending<A, R>[], error: unknown): void {
    const now = monotonicMs();
    const waiting = batch.filter((item) => item.deadline > now);
    const expired = lockTimeoutError(error, lockWait.timeoutMs);
    for (const item of batch) if (item.deadline <= now) item.reject(expired);
    queue = [...waiting, ...queue];
    if (queue.length === 0) {
      failed = 0;
      return;
    }
    failed += 1;
    publishLockWait(failed, queue.length);
    schedule(nextLockDelay(failed, Math.min(...queue.map((item) => item.deadline)) - now));
  }

  function flush(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    let outcomes: Outcome<R>[];
    try {
      // A batch of one needs no savepoint: its own transaction is the batch's, and a failure rolls back only it.
      outcomes = batch.length === 1 ? [{ ok: true, value: one.immediate(...batch[0]!.args) }] : flushAll.immediate(batch);
    } catch (error) {
      if (isLockBusy(error)) return waitForLock(batch, error);
      failed = 0;
      const mapped = toStoreError(error);
      for (const item of batch) item.reject(mapped);
      return;
    }
    failed = 0;
    outcomes.forEach((outcome, i) => {
      const item = batch[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(toStoreError(outcome.error));
    });
  }

  return (...args: A) => new Promise<R>((resolve, reject) => {
    queue.push({ args, deadline: monotonicMs() + lockWait.timeoutMs, resolve, reject });
    if (!scheduled) schedule(0);
  });
}
