// Lookups by one key, batched by back-pressure: the keys asked for meanwhile go out as one SELECT.
import type { PostgresRow } from './driver.js';
import { createBatcher, earliest, type BatcherLimits } from './batcher.js';
import { prepareSql, type PostgresRunner } from './query.js';

/** How a batched lookup reads its rows. */
export interface LookupShape<Row extends PostgresRow, R> {
  /**
   * The statement, given the condition on its key column: `= $1` (one key) or `= ANY($1::text[])` (several).
   * `$2`, when the statement has one, is `extra()`.
   */
  readonly sql: (match: string) => string;
  /** The key column of a row. */
  keyOf(row: Row): string;
  /**
   * The record of a row, made anew on each call: two calls of one batch that ask for the same key each get
   * objects of their own, as lookups of their own would.
   */
  toRecord(row: Row): R;
  /** A second parameter read when the batch is sent (e.g. "now", for expiry). */
  extra?(): unknown;
}

/**
 * One lookup per key, batched (batcher.ts): each batch is sent after every call in it was made, so each answer
 * is as fresh as a lookup of its own; unknown keys answer `null`. Keys are sent once per batch.
 *
 * A batch of one distinct key (every batch of a quiet store, and of a busy one whose calls ask for one
 * integration or one token) goes out as the `= $1` statement. PostgreSQL keeps a prepared statement's generic
 * plan only if it costs no more than the plans made for the values given: it costs an array parameter as 10
 * keys, and an array it can read by its length, so `= ANY($1)` with one key was planned again on every
 * execution (11–16 µs of the database's CPU each, BENCHMARKS.md, twelfth pass). The `= $1` plan is kept, and
 * is a probe of the unique index whatever the table's statistics say; an array hidden from the planner would be
 * kept too, but planned on a small table it scans the expiry index or the whole table, and keeps doing so as
 * the table grows.
 * @see DESIGN §3a (one store round trip per step).
 */
export function createBatchedLookup<Row extends PostgresRow, R>(
  db: PostgresRunner,
  shape: LookupShape<Row, R>,
  limits: BatcherLimits,
): (key: string) => Promise<R | null> {
  const one = prepareSql(shape.sql('= $1'));
  const many = prepareSql(shape.sql('= ANY($1::text[])'));
  return createBatcher<string, R | null>(async (keys, sendBy) => {
    const distinct = [...new Set(keys)];
    const values: unknown[] = distinct.length === 1 ? [distinct[0]] : [distinct];
    if (shape.extra) values.push(shape.extra());
    const { rows } = await db.read<Row>(distinct.length === 1 ? one : many, values, earliest(sendBy));
    const found = new Map(rows.map((row) => [shape.keyOf(row), row]));
    return keys.map((key) => {
      const row = found.get(key);
      return { ok: true, value: row ? shape.toRecord(row) : null };
    });
  }, limits);
}
