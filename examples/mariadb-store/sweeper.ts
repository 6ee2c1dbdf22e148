// Background deletion of expired codes, tokens and tombstones, in small batches, on an unref'd timer.
import type { MariaDb } from './db.js';
import type { MariaDbTables } from './schema.js';

/** Rows per DELETE: small enough that each statement holds its locks for milliseconds. */
const BATCH = 1000;

/** A running sweeper; `stop()` clears the timer and waits for a run in flight. */
export interface MariaDbSweeper {
  stop(): Promise<void>;
}

/**
 * Every `intervalSeconds`, deletes expired codes and tokens, and revocation rows past their `keep_until`.
 * Reads already treat expired rows as absent, so the sweep is about space only and may lag. Deleting a
 * revocation row is safe at any time: it waits for the locks on it, and a later save creates it again.
 * Failures go to `onError` and the next run tries again: an outage must not crash the host.
 */
export function startMariaDbSweeper(
  db: MariaDb,
  t: MariaDbTables,
  intervalSeconds: number,
  onError: (err: unknown) => void,
): MariaDbSweeper {
  const statements = [
    `DELETE FROM ${t.codes} WHERE expires_at <= ? LIMIT ${BATCH}`,
    `DELETE FROM ${t.tokens} WHERE expires_at <= ? LIMIT ${BATCH}`,
    ...[t.grantRevocations, t.clientRevocations, t.userRevocations].map(
      (table) => `DELETE FROM ${table} WHERE keep_until <= ? LIMIT ${BATCH}`,
    ),
  ];
  let stopped = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  async function sweep(): Promise<void> {
    for (const sql of statements) {
      let deleted = BATCH;
      while (!stopped && deleted === BATCH) deleted = (await db.run(sql, [new Date()])).affectedRows;
    }
  }

  function arm(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep()
        .catch(onError)
        .finally(() => {
          running = null;
          arm();
        });
    }, intervalSeconds * 1000);
    // A store must never keep the process alive on its own.
    timer.unref();
  }

  arm();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
