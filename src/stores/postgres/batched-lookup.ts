// Lookups by one key, batched by back-pressure: the keys asked for meanwhile go out as one `= ANY($1)` SELECT.
import type { PostgresRow } from './driver.js';
import { createBatcher, type BatcherLimits } from './batcher.js';
import type { PostgresRunner, PreparedSql } from './query.js';

/** How a batched lookup reads its rows. */
export interface LookupShape<Row extends PostgresRow, R> {
  /** `$1` is the text[] of keys; `$2`, when the statement has one, is `extra()`. */
  readonly sql: PreparedSql;
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
 * @see DESIGN §3a (one store round trip per step).
 */
export function createBatchedLookup<Row extends PostgresRow, R>(
  db: PostgresRunner,
  shape: LookupShape<Row, R>,
  limits: BatcherLimits,
): (key: string) => Promise<R | null> {
  return createBatcher<string, R | null>(async (keys) => {
    const values: unknown[] = [[...new Set(keys)]];
    if (shape.extra) values.push(shape.extra());
    const { rows } = await db.query<Row>(shape.sql, values);
    const found = new Map(rows.map((row) => [shape.keyOf(row), row]));
    return keys.map((key) => {
      const row = found.get(key);
      return { ok: true, value: row ? shape.toRecord(row) : null };
    });
  }, limits);
}
