// Group commit for the SQLite store: token writes of one event-loop turn share one transaction.
import type { SqliteConnection } from './driver.js';
import { runSqlite } from './errors.js';

interface Pending<A extends unknown[], R> {
  readonly args: A;
  resolve(value: R): void;
  reject(reason: unknown): void;
}

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
 * @see DESIGN §3a (one store round trip per step), contract `TokenStore.saveTokens` (all or nothing).
 */
export function createGroupCommit<A extends unknown[], R>(
  db: SqliteConnection,
  write: (...args: A) => R,
): (...args: A) => Promise<R> {
  const one = db.transaction(write);
  let queue: Pending<A, R>[] = [];

  const flushAll = db.transaction((batch: Pending<A, R>[]) => {
    const outcomes: Array<{ ok: true; value: R } | { ok: false; error: unknown }> = [];
    for (const item of batch) {
      try {
        outcomes.push({ ok: true, value: one(...item.args) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  });

  function flush(): void {
    const batch = queue;
    queue = [];
    let outcomes;
    try {
      outcomes = runSqlite(() => flushAll.immediate(batch));
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    outcomes.forEach((outcome, i) => {
      const item = batch[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else {
        try {
          runSqlite(() => { throw outcome.error; });
        } catch (mapped) {
          item.reject(mapped);
        }
      }
    });
  }

  return (...args: A) => new Promise<R>((resolve, reject) => {
    if (queue.length === 0) setImmediate(flush);
    queue.push({ args, resolve, reject });
  });
}
