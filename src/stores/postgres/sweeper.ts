// Background deletion of expired PostgreSQL rows, in small batches so requests never wait behind it.
import { startAsyncSweepLoop, type SweepLoop } from '../sweep-loop.js';
import type { PostgresTables } from './schema.js';
import { prepareSql, type PostgresRunner } from './query.js';

/** Where the store reports what it cannot throw (background failures). */
export interface StoreLogger {
  warn(message: string, error?: unknown): void;
}

/** Rows per DELETE: small enough that each statement holds its locks for milliseconds. */
const BATCH = 1000;
/** Upper bound of batches per table per run, so one run cannot monopolise a pool connection. */
const MAX_BATCHES = 100;

/** A running sweeper: the same handle as the batched sweeps of the SQLite and memory stores. */
export type PostgresSweeper = SweepLoop;

/**
 * Every `intervalSeconds`, deletes expired codes, tokens, grant rows, revocation tombstones (kept for
 * `STORE_POLICY.revocationRetentionMs`) and ended rate-limit windows, 1000 at a time. Reads already treat
 * expired rows as absent, so the sweep is only about space: it may lag without affecting correctness. It
 * skips rows that a request holds locked (SKIP LOCKED), so it never waits for a request nor deadlocks with
 * one; the next run takes them. The timer is unref'd (it never keeps the process alive) and re-armed only after a run finishes
 * (runs never overlap). Errors go to the logger and the next run tries again: an outage must not crash
 * the host.
 */
export function startPostgresSweeper(
  db: PostgresRunner,
  t: PostgresTables,
  intervalSeconds: number,
  logger: StoreLogger,
): PostgresSweeper {
  const statements = [t.codes, t.tokens, t.grants, t.clientRevocations, t.userRevocations, t.rateLimits].map((table) =>
    prepareSql(
      // = ANY(ARRAY(…)) plans as a TID scan of the rows found through the expires_at index; IN (SELECT …)
      // may be planned as a join that reads the whole table.
      `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM ${table} WHERE expires_at <= $1 LIMIT ${BATCH} FOR UPDATE SKIP LOCKED))`,
    ),
  );
  return startAsyncSweepLoop(async (isStopped) => {
    for (const sql of statements) {
      for (let i = 0; i < MAX_BATCHES && !isStopped(); i++) {
        const { rowCount } = await db.query(sql, [new Date()]);
        if ((rowCount ?? 0) < BATCH) break;
      }
    }
  }, intervalSeconds * 1000, (err) => logger.warn('express-oauth-router: PostgreSQL sweep of expired rows failed', err));
}
