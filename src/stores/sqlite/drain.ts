// The SQLite store's drain of a revocation: the tokens under an integration's (or a user's) tombstone, deleted a chunk per transaction.
import { performance } from 'node:perf_hooks';
import type { SqliteConnection } from './driver.js';
import type { SqliteLockWait } from './lock-wait.js';
import { STORE_POLICY } from '../store-policy.js';
import { StoreUnavailableError } from '../store-unavailable-error.js';

/** The longest pause between two chunks of a drain, in ms. */
const MAX_DRAIN_PAUSE_MS = 100;

/** What a chunk should take, in ms: the event loop and the write lock are held that long at most, give or take. */
export const DRAIN_CHUNK_TARGET_MS = 20;
/** Tokens in a revocation's first chunk, and the bounds of the later ones. */
export const DRAIN_CHUNK_FIRST = 250;
const DRAIN_CHUNK_MIN = 50;
const DRAIN_CHUNK_MAX = 5000;

/**
 * The size of the next chunk, from how long the last one took: aimed at `DRAIN_CHUNK_TARGET_MS`, at most doubled at a
 * step. A token's row sits in four b-trees, three of them keyed by random values, so a chunk dirties about four pages
 * per row and its commit writes them to the WAL (and, past 1,000 pages, checkpoints): on the 2-core bench VM under
 * `synchronous = FULL`, 250 tokens took 20 ms (p50; 43 ms p99), 1,000 took 52 ms and 4,000 126 ms, so the time per
 * token falls with the size (77, 53, 30 µs; 11 µs in one transaction of 300,000) and a fixed size fits no disk.
 */
export function nextDrainChunk(size: number, elapsedMs: number): number {
  const aimed = Math.round(size * DRAIN_CHUNK_TARGET_MS / Math.max(elapsedMs, 1));
  return Math.min(DRAIN_CHUNK_MAX, Math.max(DRAIN_CHUNK_MIN, Math.min(aimed, size * 2)));
}

/**
 * Waits after a chunk as long as the chunk took (1 ms at least): yielding with setImmediate alone serves this
 * process's requests, but another process (the app, when `oauth-admin` revokes) polls for the write lock on a timer
 * (lock-wait.ts: every 50 ms at most), and would nearly always meet the next chunk's. Half of the time free lets its
 * waiting writes in within a few of its polls, for twice the drain's length.
 */
function pauseAfter(chunkMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(1, Math.ceil(chunkMs)), MAX_DRAIN_PAUSE_MS)));
}

/**
 * Runs a drain to its end: `chunk(limit)` runs one chunk of at most `limit` tokens and resolves whether it was the last,
 * and how long its transaction took (ms, lock waits apart). Sizes and paces the chunks; rejects as a chunk does.
 * @see RFC 7009 §2.1.
 */
export async function drainPaced(chunk: (limit: number) => Promise<readonly [done: boolean, tookMs: number]>): Promise<void> {
  let size = DRAIN_CHUNK_FIRST;
  for (;;) {
    const [done, took] = await chunk(size);
    if (done) return;
    size = nextDrainChunk(size, took);
    await pauseAfter(took);
  }
}

/** A tombstone with a drain left: an integration's (`userId` null) or one user's at it. */
export interface DrainTarget {
  readonly clientId: string;
  readonly userId: string | null;
}

/** One revocation's drain, a transaction at a time. */
export interface SqliteDrain {
  /**
   * In one IMMEDIATE transaction: deletes up to `limit` tokens the tombstone refuses (`issued_at` at or
   * before its moment, the moment as it is now, whichever process moved it last), records the grant of each refresh
   * token among them as revoked, and, once none is left, marks the tombstone drained. True when it did; also when
   * there is no such tombstone.
   */
  chunk(target: DrainTarget, limit: number): boolean;
  /** The tombstones whose drain is not done: interrupted ones (a process killed midway) and ones under way. */
  pending(): DrainTarget[];
}

/** Row of a chunk's `DELETE … RETURNING`: the token's kind and grant. */
type Deleted = [kind: 'access' | 'refresh', grantId: string];

/**
 * Prepares the drain. The revocation itself records its tombstone first, in a short transaction of its own
 * (tokens.ts): from then on every lookup refuses the tokens under it (`findToken`) and every save of a grant whose
 * refresh token is still under it (`isRefused`), so nothing depends on the drain having finished; the drain only
 * gives the space back and turns the refresh tokens' refusal into grant tombstones, which outlive the rows.
 * Each chunk searches the integration's index (`tokens_client_user`) and skips tokens saved after the moment, which
 * stay valid.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.4 (a refresh token dies with its authorization).
 */
export function prepareSqliteDrain(db: SqliteConnection): SqliteDrain {
  const deleteClientChunk = db.prepare<[string, number], Deleted>(`
    DELETE FROM tokens WHERE rowid IN (
      SELECT t.rowid FROM revoked_clients r JOIN tokens t ON t.client_id = r.client_id AND t.issued_at <= r.revoked_at
      WHERE r.client_id = ? LIMIT ?)
    RETURNING kind, grant_id`).raw();
  const deleteUserChunk = db.prepare<[string, string, number], Deleted>(`
    DELETE FROM tokens WHERE rowid IN (
      SELECT t.rowid FROM revoked_client_users r
        JOIN tokens t ON t.client_id = r.client_id AND t.user_id = r.user_id AND t.issued_at <= r.revoked_at
      WHERE r.client_id = ? AND r.user_id = ? LIMIT ?)
    RETURNING kind, grant_id`).raw();
  const upsertRevokedGrant = db.prepare<[string, number]>(`
    INSERT INTO revoked_grants (grant_id, expires_at) VALUES (?, ?)
    ON CONFLICT (grant_id) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`);
  const clientDrained = db.prepare<[string]>('UPDATE revoked_clients SET draining = 0 WHERE client_id = ? AND draining = 1');
  const userDrained = db.prepare<[string, string]>(
    'UPDATE revoked_client_users SET draining = 0 WHERE client_id = ? AND user_id = ? AND draining = 1');
  const pendingClients = db.prepare<[], string>('SELECT client_id FROM revoked_clients WHERE draining = 1').pluck();
  const pendingUsers = db.prepare<[], [string, string]>(
    'SELECT client_id, user_id FROM revoked_client_users WHERE draining = 1').raw();

  const chunk = db.transaction(({ clientId, userId }: DrainTarget, limit: number): boolean => {
    const deleted = userId === null
      ? deleteClientChunk.all(clientId, limit)
      : deleteUserChunk.all(clientId, userId, limit);
    // Expired refresh tokens count too: a refresh that read one just before it expired may still be saving.
    const expiresAt = Date.now() + STORE_POLICY.revocationRetentionMs;
    for (const [kind, grantId] of deleted) if (kind === 'refresh') upsertRevokedGrant.run(grantId, expiresAt);
    if (deleted.length === limit) return false;
    // Fewer than a chunk: none is left under the moment, in this transaction, so the tombstone may go when it expires.
    if (userId === null) clientDrained.run(clientId);
    else userDrained.run(clientId, userId);
    return true;
  });

  return {
    chunk: (target, limit) => chunk.immediate(target, limit),
    pending: () => [
      ...pendingClients.all().map((clientId) => ({ clientId, userId: null })),
      ...pendingUsers.all().map(([clientId, userId]) => ({ clientId, userId })),
    ],
  };
}

/**
 * Deletes the tokens under a tombstone, a chunk per transaction, sized and paced by `drainPaced`, other work going on
 * between them. Each chunk is checked like every write (file-guard.ts) and waits for a lock as any call does, up to
 * lockTimeoutMs; past it the drain rejects with the tombstone in place: its tokens stay refused, and the next open or
 * sweep finishes it. Once the store is closed (`closed()`), it rejects before its next chunk: a host's own connection
 * stays open after `close()`, and must not be written to by the store any more. @see RFC 7009 §2.1.
 */
export function drainRevocation(
  drain: SqliteDrain, lockWait: SqliteLockWait, guarded: <T>(write: () => T) => T, target: DrainTarget,
  closed: () => boolean,
): Promise<void> {
  return drainPaced((limit) => lockWait.run(() => {
    if (closed()) throw new StoreUnavailableError('SQLite store unavailable (closed during a revocation\'s drain)');
    const started = performance.now();
    const done = guarded(() => drain.chunk(target, limit));
    return [done, performance.now() - started] as const;
  }));
}
