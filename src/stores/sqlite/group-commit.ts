// Group commit for the SQLite store: the writes of one event-loop turn (code consumes, token saves) share one transaction.
import type { SqliteConnection } from './driver.js';
import { isLockBusy, toStoreError } from './errors.js';
import { later, lockTimeoutError, monotonicMs, nextLockDelay, publishLockWait, type SqliteLockWait } from './lock-wait.js';

interface Pending {
  /** Runs the call: alone as the batch's `BEGIN IMMEDIATE` transaction, or in a savepoint of the batch's. */
  run(alone: boolean): unknown;
  /** Committed and answered ahead of the turn's synced batch (GroupCommitOptions.ahead). */
  readonly ahead: boolean;
  /** Monotonic ms after which a call still meeting a lock is answered 503. */
  readonly deadline: number;
  resolve(value: unknown): void;
  reject(reason: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** How a write's calls join the batch. @see createGroupCommit. */
export interface GroupCommitOptions {
  /**
   * Commit the turn's calls of this write in a batch of their own, ahead of the turn's other calls, and answer
   * them at once, without waiting for the disk: for a write whose answer only leads to another write of the
   * same turn (a code consumed, then the tokens saved), which the turn's synced batch then makes durable
   * together with it. Default false.
   */
  readonly ahead?: boolean;
}

/** Turns a synchronous write into one whose calls join the store's shared batch. @see createGroupCommit. */
export type GroupCommit = <A extends unknown[], R>(write: (...args: A) => R, options?: GroupCommitOptions) => (...args: A) => Promise<R>;

/**
 * Creates the store's group commit: every write wrapped by it (`consumeCode`, `saveTokens`) joins one queue,
 * and the calls of one event-loop turn commit together in one `BEGIN IMMEDIATE … COMMIT` (one WAL append
 * and, under `synchronous = FULL`, one sync) instead of one per call, which is what a token endpoint under
 * load spends most of its SQLite time on. Each call still runs in its own savepoint (a nested
 * better-sqlite3 transaction), so one failing call rolls back alone and the others commit; if the commit
 * itself fails, every call of the batch is rejected and nothing of it is written. A call is answered only
 * after the commit: what a saved token's response confirms is on disk (for a consume, see `ahead` below).
 * Calls keep their order and run one after the other inside the batch transaction, which holds SQLite's
 * write lock from `BEGIN IMMEDIATE` to `COMMIT`: of two consumes of one code in a batch the second sees
 * the first's update (`replayed`), and everything one call does (for `saveTokens`: its tombstone checks,
 * then its inserts) is never interleaved with another connection's write. A revocation is a write
 * transaction of its own, so it commits wholly before the batch (whose checks see its tombstone) or wholly
 * after it (and deletes what the batch saved), never between one call's check and its insert. Each call
 * resolves with its own result.
 *
 * When another connection holds the lock, the whole batch is rolled back (a lock met inside one call's
 * savepoint aborts the batch too: nothing of it is written) and run again on a timer, calls made meanwhile
 * joining behind it; a call still meeting the lock at its deadline (`lockWait.timeoutMs` after it was made)
 * is rejected with StoreUnavailableError and never written. Every call is answered exactly once. Each batch's
 * outcome but a lock (committed, or the error that failed it) goes to `noteOutcome` (write-health.ts: readiness).
 *
 * Calls of an `ahead` write (the code consumes) go first: the turn runs two batches, in two `setImmediate`
 * callbacks queued together, so that everything a consume's answer leads to (the checks of the code, the
 * minting, the `saveTokens` of the same request) runs between them and joins the second. A code exchange then
 * takes one turn and one synced commit instead of two of each (BENCHMARKS.md, sixth pass). With `relaxAhead`
 * (a WAL file under FULL) the first batch commits under `synchronous = NORMAL`: its WAL frames are written, not
 * synced. The next synced commit of the connection (the turn's second batch, a revocation) makes it durable,
 * because the WAL is appended in order, a sync covers the whole file, and recovery replays frames only up to the
 * first gap in their checksum chain: no later commit survives a power cut without it. So tokens issued on a consumed code
 * are never on disk while the consume is not. What a power cut may undo is a consume whose request issued
 * nothing (a wrong verifier or redirect_uri, a revoked grant): the code is then live again until it expires,
 * which gives away nothing a client holds.
 * @see DESIGN §3a (one store round trip per step), contract `CodeStore.consumeCode` (exactly one winner),
 *   `TokenStore.saveTokens` (all or nothing), RFC 6749 §4.1.2 (single-use codes).
 */
export function createGroupCommit(
  db: SqliteConnection, lockWait: SqliteLockWait, relaxAhead = false, beforeCommit: () => void = () => {},
  noteOutcome: (error?: unknown) => void = () => {},
): GroupCommit {
  let queue: Pending[] = [];
  // The ahead batch skips SQLite's sync; the connection is back under FULL for everything else (revocations,
  // the synced batch, a host's own writes on a shared connection). Executed, not prepared once: SQLite applies
  // a pragma's new value when the statement is compiled, and running a prepared one again changes nothing.
  const setLevel = (level: 'NORMAL' | 'FULL'): void => {
    if (relaxAhead) db.exec(`PRAGMA synchronous = ${level}`);
  };
  let scheduled = false;
  let failed = 0;

  const flushAll = db.transaction((batch: Pending[]) => {
    const outcomes: Outcome[] = [];
    for (const item of batch) {
      try {
        outcomes.push({ ok: true, value: item.run(false) });
      } catch (error) {
        // Rethrown, so the batch rolls back whole: a lock, to be retried, rather than this call alone failing; and an
        // error after which SQLite rolled the transaction back itself (a full disk, an I/O error), failing every
        // call, since the calls after it would otherwise each commit on their own, outside the batch.
        if (isLockBusy(error) || !db.inTransaction) throw error;
        outcomes.push({ ok: false, error });
      }
    }
    // Throwing rolls the batch back: nothing it wrote is answered as saved (file-guard.ts).
    beforeCommit();
    return outcomes;
  });

  function schedule(delay: number): void {
    scheduled = true;
    later(delay, flush);
  }

  /** Answers the calls past their deadline, keeps the others at the head of the queue and retries later. */
  function waitForLock(batch: Pending[], error: unknown): void {
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

  /** Commits a batch; a batch of one needs no savepoint (its own transaction is the batch's). */
  function commit(batch: Pending[]): Outcome[] {
    return batch.length === 1 ? [{ ok: true, value: batch[0]!.run(true) }] : flushAll.immediate(batch);
  }

  function answer(batch: Pending[], outcomes: Outcome[]): void {
    outcomes.forEach((outcome, i) => {
      const item = batch[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(toStoreError(outcome.error));
    });
  }

  /** The turn's first batch: the `ahead` calls, answered before the second batch runs. */
  function flushAhead(): void {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    for (const item of queue) (item.ahead ? batch : rest).push(item);
    if (batch.length === 0) return;
    queue = rest;
    let outcomes: Outcome[];
    try {
      setLevel('NORMAL');
      try {
        outcomes = commit(batch);
      } finally {
        setLevel('FULL');
      }
    } catch {
      // Back in the queue, ahead of the rest: the turn's second batch meets the lock (or the fault) itself
      // and waits or fails for all of them.
      queue = [...batch, ...queue];
      return;
    }
    answer(batch, outcomes);
  }

  function flush(): void {
    scheduled = false;
    // The turn's consumes went ahead and led to no save (a refused exchange): no transaction to open. An empty one
    // would still take the write lock, which another process (the CLI, a backup) would meet as SQLITE_BUSY.
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    let outcomes: Outcome[];
    try {
      outcomes = commit(batch);
    } catch (error) {
      if (isLockBusy(error)) return waitForLock(batch, error);
      noteOutcome(error);
      failed = 0;
      const mapped = toStoreError(error);
      for (const item of batch) item.reject(mapped);
      return;
    }
    failed = 0;
    noteOutcome();
    answer(batch, outcomes);
  }

  return <A extends unknown[], R>(write: (...args: A) => R, options: GroupCommitOptions = {}) => {
    const one = db.transaction(write);
    // A batch of one is its own transaction, checked before its COMMIT as a batch of many is.
    const alone = db.transaction((...args: A): R => {
      const result = write(...args);
      beforeCommit();
      return result;
    });
    const ahead = options.ahead === true;
    return (...args: A) => new Promise<R>((resolve, reject) => {
      queue.push({
        run: (single) => (single ? alone.immediate(...args) : one(...args)),
        ahead,
        deadline: monotonicMs() + lockWait.timeoutMs,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!scheduled) {
        // Queued together, so they run in this order in one check phase, with the microtasks of the first
        // batch's answers (the saves they lead to) in between.
        scheduled = true;
        setImmediate(flushAhead);
        setImmediate(flush);
      }
    });
  };
}
