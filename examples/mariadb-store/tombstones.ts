// Revocation rows of the example MariaDB store: each is both the lock that orders saves and revocations, and the tombstone.
import { STORE_POLICY } from 'express-oauth-router';
import type { Queryable } from './db.js';
import type { MariaDbTables } from './schema.js';

/** How long a revocation is remembered: the package's policy (a day), the same for every store. */
const REVOCATION_RETENTION_MS = STORE_POLICY.revocationRetentionMs;

/** One revocation row: a grant, a client, or a (client, user) pair. */
export interface TombstoneKey {
  readonly kind: 'client' | 'user' | 'grant';
  readonly table: string;
  readonly columns: readonly string[];
  readonly values: readonly string[];
}

export const clientKey = (t: MariaDbTables, clientId: string): TombstoneKey =>
  ({ kind: 'client', table: t.clientRevocations, columns: ['client_id'], values: [clientId] });
export const userKey = (t: MariaDbTables, clientId: string, userId: string): TombstoneKey =>
  ({ kind: 'user', table: t.userRevocations, columns: ['client_id', 'user_id'], values: [clientId, userId] });
export const grantKey = (t: MariaDbTables, grantId: string): TombstoneKey =>
  ({ kind: 'grant', table: t.grantRevocations, columns: ['grant_id'], values: [grantId] });

interface TombstoneRow {
  revoked_at: Date | null;
  keep_until: Date;
}

/**
 * Reads a revocation row and returns the moment of its revocation while it is remembered, else `null`.
 * With `lock`, it first takes a shared lock on the row (creating the row if it is missing: the insert's
 * exclusive lock then stands in), so a revocation of the same key, which takes the row's exclusive lock,
 * waits for this transaction to commit, and this transaction waits for a revocation already under way and
 * then reads its moment (a locking read sees the latest committed row, not a snapshot). Saves of one key
 * share the lock and do not wait for each other.
 */
export async function readTombstone(q: Queryable, key: TombstoneKey, now: Date, lock: boolean): Promise<Date | null> {
  const where = key.columns.map((column) => `${column} = ?`).join(' AND ');
  const select = `SELECT revoked_at, keep_until FROM ${key.table} WHERE ${where}${lock ? ' LOCK IN SHARE MODE' : ''}`;
  let [row] = await q.rows<TombstoneRow>(select, key.values);
  if (!row && lock) {
    // A no-op update of an existing row still takes its exclusive lock: the row is locked either way.
    await q.run(
      `INSERT INTO ${key.table} (${key.columns.join(', ')}, revoked_at, keep_until)
       VALUES (${key.columns.map(() => '?').join(', ')}, NULL, ?) ON DUPLICATE KEY UPDATE keep_until = keep_until`,
      [...key.values, new Date(now.getTime() + REVOCATION_RETENTION_MS)],
    );
    [row] = await q.rows<TombstoneRow>(select, key.values);
  }
  if (!row || row.revoked_at === null || row.keep_until.getTime() <= now.getTime()) return null;
  return row.revoked_at;
}

/**
 * Records revocations at `now` (the store process's clock, the one `authorizedAt` comes from), keeping the
 * latest moment of each key, in one statement that takes each row's exclusive lock. Keys of one kind go in
 * sorted order, so two revocations locking overlapping sets of rows never wait for each other in a cycle.
 */
export async function recordRevocations(q: Queryable, keys: readonly TombstoneKey[], now: Date): Promise<void> {
  const [first] = keys;
  if (!first) return;
  const sorted = [...keys].sort((a, b) => (JSON.stringify(a.values) < JSON.stringify(b.values) ? -1 : 1));
  const row = `(${first.columns.map(() => '?').join(', ')}, ?, ?)`;
  const keepUntil = new Date(now.getTime() + REVOCATION_RETENTION_MS);
  await q.run(
    `INSERT INTO ${first.table} (${first.columns.join(', ')}, revoked_at, keep_until) VALUES ${sorted.map(() => row).join(', ')}
     ON DUPLICATE KEY UPDATE
       revoked_at = IF(revoked_at IS NULL OR revoked_at < VALUES(revoked_at), VALUES(revoked_at), revoked_at),
       keep_until = GREATEST(keep_until, VALUES(keep_until))`,
    sorted.flatMap((key) => [...key.values, now, keepUntil]),
  );
}
