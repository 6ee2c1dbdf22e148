// The PostgreSQL store's rateLimits tier: one row per counter, each hit one upsert statement.
import type { RateLimitCount, RateLimitStore } from '../contract.js';
import type { PostgresTables } from './schema.js';
import { prepareSql, type PostgresRunner } from './query.js';
import { dateOf, jsonRowSql, parseJsonRow } from './json-row.js';

/** A counter as a JSON row: its count, and the end of its window. */
const COUNTER_RECORD = jsonRowSql(['count', ['expires_at', 'ms']]);

function toCount(row: { r: string }): RateLimitCount {
  const [count, expiresAt] = parseJsonRow(row.r);
  return { count: count as number, resetAt: dateOf(expiresAt) };
}

/**
 * Counters in the `rate_limits` table (migration 5). A hit is one `INSERT … ON CONFLICT DO UPDATE … RETURNING`:
 * concurrent hits on one key, from any number of instances, queue on the row and each sees the count its
 * predecessor wrote, so each count is returned once. Every CASE of the UPDATE reads the row as it was, so a
 * window that has ended restarts at 1 with a new end in the same statement. The caller's clock decides
 * (`now`, `now + windowMs`); the sweeper deletes ended windows.
 * @see RFC 6819 §5.1.4.2.3 (lock accounts), RFC 6585 §4.
 */
export function createPostgresRateLimits(db: PostgresRunner, t: PostgresTables): RateLimitStore {
  // LEAST keeps a flood within integer range: the count is past any limit long before.
  const hit = prepareSql(`INSERT INTO ${t.rateLimits} AS r (key, count, expires_at) VALUES ($1, 1, $3)
    ON CONFLICT (key) DO UPDATE SET
      count = CASE WHEN r.expires_at <= $2 THEN 1 ELSE LEAST(r.count, 2000000000) + 1 END,
      expires_at = CASE WHEN r.expires_at <= $2 THEN EXCLUDED.expires_at ELSE r.expires_at END
    RETURNING ${COUNTER_RECORD} AS r`);
  const get = prepareSql(`SELECT ${COUNTER_RECORD} AS r FROM ${t.rateLimits} WHERE key = $1 AND expires_at > $2`);
  const release = prepareSql(`UPDATE ${t.rateLimits} SET count = count - 1 WHERE key = $1 AND expires_at = $2 AND count > 0`);
  const reset = prepareSql(`DELETE FROM ${t.rateLimits} WHERE key = $1`);
  return {
    async hit(key, windowMs, now) {
      const { rows } = await db.query<{ r: string }>(hit, [key, now, new Date(now.getTime() + windowMs)]);
      return toCount(rows[0]!);
    },
    async get(key, now) {
      const { rows } = await db.read<{ r: string }>(get, [key, now]);
      return rows[0] ? toCount(rows[0]) : null;
    },
    async release(key, resetAt) {
      await db.query(release, [key, resetAt]);
    },
    async reset(key) {
      await db.query(reset, [key]);
    },
  };
}
