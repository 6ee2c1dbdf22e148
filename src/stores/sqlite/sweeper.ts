// The SQLite store's purge of expired rows, a thousand per statement, so requests run between batches.
import type { SqliteConnection } from './driver.js';
import type { SqliteDrain } from './drain.js';
import { LOCK_WAIT_CLOSED, lockWaitSteps } from './lock-wait.js';
import { SWEEP_BATCH } from '../sweep-loop.js';

/**
 * Rows per DELETE, a fifth of the other stores' batch: better-sqlite3 runs the statement on the event loop,
 * and a row of the tokens table sits in four b-trees keyed by random hashes, so each row dirties pages of its
 * own and the commit may checkpoint them. With 200 rows a batch held the loop for at most ~30 ms on the
 * 2-core CI machine (test/stores/housekeeping.test.ts), against ~90 ms with 500, for the same total time.
 */
export const SQLITE_SWEEP_BATCH = SWEEP_BATCH / 5;

/**
 * Every table with an `expires_at`, the key that names one row, and what else a row must be to go. Tables WITHOUT
 * ROWID have no rowid, so their primary key picks the rows; the others use the rowid, the b-tree's own key. Each
 * inner SELECT walks the table's `expires_at` index (schema.ts) from the oldest row, so a batch never scans live rows.
 * A revocation's tombstone stays, expired or not, while its drain has tokens left: it is what refuses them.
 */
const TABLES: readonly (readonly [table: string, key: string, also?: string])[] = [
  ['codes', 'rowid'],
  ['tokens', 'rowid'],
  ['revoked_grants', 'rowid'],
  ['revoked_clients', 'client_id', 'draining = 0'],
  ['revoked_client_users', '(client_id, user_id)', 'draining = 0'],
  ['rate_limits', 'key'],
];

/**
 * Prepares the sweep of expired codes, tokens, revocation tombstones past `STORE_POLICY.revocationRetentionMs`
 * (their `expires_at`) and ended rate-limit windows. Only rows with `expires_at <= now` go: exactly the rows
 * every read already treats as absent (`expires_at > now` is live), so a sweep never changes an answer.
 * Each batch is one autocommitted DELETE of at most `SQLITE_SWEEP_BATCH` rows; the run yields after each.
 * First, it finishes the drains left undone (a revocation whose process was killed midway, or whose chunk met
 * another connection's lock past its wait), a chunk per step (drain.ts); their tokens are refused meanwhile.
 *
 * A batch (or drain chunk) that meets another connection's lock is tried again as every other call of the store is
 * (lock-wait.ts: the same delays, published on `sqliteLockWaitChannel`), up to `lockTimeoutMs`, and only then ends the
 * run with StoreUnavailableError. Several processes serving from one file hold the write lock about half the time under
 * load: a run that ended at the first lock it met deleted nothing while they served (bench: 60,000 expired tokens,
 * three processes under load, 1,800 deleted in 20 s, none of the tables after `tokens`; one process: all in under 8 s).
 * A `SweepRun` (sweep-loop.ts), typed as the generator it is so that the store can delegate to it (`yield*`).
 * @see RFC 6749 §10.5 (codes are short-lived), RFC 7009 §2.1 (tombstones kept for the retention only).
 */
export function prepareSqliteSweep(db: SqliteConnection, drain: SqliteDrain, lockTimeoutMs: number): (now: number) => Generator<unknown, void> {
  const withLockWait = <T>(operation: () => T) => lockWaitSteps(operation, lockTimeoutMs, () => db.open);
  const statements = TABLES.map(([table, key, also]) =>
    db.prepare<[number, number]>(
      `DELETE FROM ${table} WHERE ${key} IN (
         SELECT ${key === '(client_id, user_id)' ? 'client_id, user_id' : key} FROM ${table}
         WHERE expires_at <= ?${also === undefined ? '' : ` AND ${also}`} ORDER BY expires_at LIMIT ?)`,
    ),
  );
  return function* sweep(now: number) {
    // A closed connection (a host closing its own Database first) ends the run quietly.
    if (!db.open) return;
    const targets = yield* withLockWait(() => drain.pending());
    if (targets === LOCK_WAIT_CLOSED) return;
    // A drain under way in a live revocation (this process's or another's) may be met here too: both delete what
    // the tombstone refuses, a chunk each, and neither misses a row.
    for (const target of targets) {
      for (;;) {
        const done = yield* withLockWait(() => drain.chunk(target, SQLITE_SWEEP_BATCH));
        if (done === LOCK_WAIT_CLOSED || !db.open) return;
        if (done) break;
        yield;
      }
      yield;
    }
    for (const statement of statements) {
      while (db.open) {
        const result = yield* withLockWait(() => statement.run(now, SQLITE_SWEEP_BATCH));
        if (result === LOCK_WAIT_CLOSED) return;
        if (result.changes < SQLITE_SWEEP_BATCH) break;
        yield;
      }
      yield;
    }
  };
}
