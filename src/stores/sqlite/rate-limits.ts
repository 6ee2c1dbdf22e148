// The SQLite store's rateLimits tier: one row per counter, each hit one upsert statement.
import type { SqliteConnection } from './driver.js';
import type { RateLimitCount, RateLimitStore } from '../contract.js';
import type { SqliteLockWait } from './lock-wait.js';

/** `rate_limits` row (schema version 5); expires_at is the window's end in ms. */
interface CounterRow {
  readonly count: number;
  readonly expires_at: number;
}

const toCount = (row: CounterRow): RateLimitCount => ({ count: row.count, resetAt: new Date(row.expires_at) });

/** The tier; ended windows are deleted by the store's sweep (sweeper.ts). */
export interface SqliteRateLimits {
  readonly rateLimits: RateLimitStore;
}

/**
 * Counters in the `rate_limits` table, statements prepared once. A hit is one `INSERT … ON CONFLICT DO UPDATE
 * … RETURNING`: SQLite runs one writer at a time, so of N concurrent hits, from any number of connections and
 * processes, each count is returned once. In the UPDATE every CASE reads the row as it was, so a window that
 * has ended restarts at 1 with a new end in the same statement. A call that meets another connection's lock
 * waits on the store's timer (`lockWait`), as every other call of the store does.
 * @see RFC 6819 §5.1.4.2.3 (lock accounts), RFC 6585 §4.
 */
export function createSqliteRateLimits(db: SqliteConnection, { run }: SqliteLockWait): SqliteRateLimits {
  const hit = db.prepare<{ key: string; now: number; expires_at: number }, CounterRow>(`
    INSERT INTO rate_limits (key, count, expires_at) VALUES (@key, 1, @expires_at)
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN expires_at <= @now THEN 1 ELSE min(count, 2000000000) + 1 END,
      expires_at = CASE WHEN expires_at <= @now THEN excluded.expires_at ELSE expires_at END
    RETURNING count, expires_at`);
  const get = db.prepare<[string, number], CounterRow>('SELECT count, expires_at FROM rate_limits WHERE key = ? AND expires_at > ?');
  const release = db.prepare<[string, number]>('UPDATE rate_limits SET count = count - 1 WHERE key = ? AND expires_at = ? AND count > 0');
  const reset = db.prepare<[string]>('DELETE FROM rate_limits WHERE key = ?');
  return {
    rateLimits: {
      async hit(key, windowMs, now) {
        const at = now.getTime();
        return run(() => toCount(hit.get({ key, now: at, expires_at: at + windowMs })!));
      },
      async get(key, now) {
        return run(() => {
          const row = get.get(key, now.getTime());
          return row ? toCount(row) : null;
        });
      },
      async release(key, resetAt) {
        await run(() => release.run(key, resetAt.getTime()));
      },
      async reset(key) {
        await run(() => reset.run(key));
      },
    },
  };
}
