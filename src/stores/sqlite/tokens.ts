// The SQLite store's tokens: tombstone checks and inserts in one transaction, revocations that leave tombstones.
import type { SqliteConnection } from './driver.js';
import type { SaveTokensOptions, TokenRecord, TokenStore } from '../contract.js';
import { STORE_POLICY, checkTokenPair } from '../store-policy.js';
import type { GroupCommit } from './group-commit.js';
import type { SqliteLockWait } from './lock-wait.js';
import { tokenValues, valuesToToken } from './rows.js';
import type { SqliteStatements } from './statements.js';
import { clientRowValuesOf } from './client-revision.js';
import { drainRevocation, type DrainTarget, type SqliteDrain } from './drain.js';

/** The `authorizedAt` of `saveTokens` in ms; refuses a missing or invalid Date, which would disable the check. */
function authorizedAtMs(options: SaveTokensOptions | undefined): number {
  const ms = options?.authorizedAt instanceof Date ? options.authorizedAt.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new TypeError('saveTokens: options.authorizedAt must be a valid Date');
  return ms;
}


/**
 * Tokens in the `tokens` table; revocations leave tombstones in `revoked_grants`, `revoked_clients` and
 * `revoked_client_users`, kept for `STORE_POLICY.revocationRetentionMs`.
 *
 * `saveTokens` goes through the store's group commit: the saves (and code consumes) of one event-loop turn
 * share one `BEGIN IMMEDIATE` transaction, and each save's tombstone check runs in it, in order, right
 * before that save's inserts.
 * Every revocation's tombstone is a write transaction of its own, and SQLite runs one writer at a time (across
 * processes too), so it falls wholly before a save (whose check then sees it) or wholly after it. A save committed
 * before it was authorized before its moment (the clock is read under the write lock), and each token keeps that
 * `authorizedAt` as its `issued_at`, so the tombstone refuses exactly the tokens saved before it: at once in every
 * lookup, while `revokeClientTokens` deletes them a chunk per transaction (drain.ts) and returns once all are gone.
 * @see RFC 6749 §4.1.2 (replay revokes the grant), §10.4 (refresh tokens), RFC 7009 §2.1 (revocation).
 */
export function createSqliteTokenStore(
  db: SqliteConnection, s: SqliteStatements, lockWait: SqliteLockWait, groupCommit: GroupCommit,
  guarded: <T>(write: () => T) => T, onRevoked: () => void, drain: SqliteDrain, closed: () => boolean,
): Required<TokenStore> {
  const { run } = lockWait;
  /**
   * Runs a revocation, then tells the revocation feed, committed or not (a spurious bump costs a cache miss),
   * in the same synchronous block: no request can read the feed between the commit and the bump.
   */
  function revoking<T>(write: () => T): Promise<T> {
    return run(() => {
      try {
        // Checked before it commits (file-guard.ts): a revocation written where no restart finds it would undo itself.
        return guarded(write);
      } finally {
        onRevoked();
      }
    });
  }
  /**
   * Whether a tombstone refuses the save, or, for a request served from a copy (`revision`, the copy's row values:
   * client-revision.ts), the integration's row no longer holds those values, or a revision this store never gave.
   */
  function refused(token: TokenRecord, authorizedAt: number, revision: string | undefined, now: number): boolean {
    const { grantId, clientId, userId } = token;
    if (revision === undefined) {
      return s.isRefused.get(grantId, now, clientId, authorizedAt, now, grantId, clientId, userId, authorizedAt, now, grantId) === 1;
    }
    const row = clientRowValuesOf(revision);
    if (row === null || row[0] !== clientId) return true;
    return s.isRefusedAtRevision.get(
      grantId, now, clientId, authorizedAt, now, grantId, clientId, userId, authorizedAt, now, grantId, ...row) === 1;
  }

  const save = groupCommit((access: TokenRecord, refresh: TokenRecord | null, authorizedAt: number, revision: string | undefined) => {
    // The refresh token shares the access token's grant, integration and user (checkTokenPair): one check.
    if (refused(access, authorizedAt, revision, Date.now())) return false;
    s.insertToken.run(...tokenValues('access', access, authorizedAt));
    if (refresh !== null) s.insertToken.run(...tokenValues('refresh', refresh, authorizedAt));
    return true;
  });

  // Write transactions start IMMEDIATE: the write lock is taken before the first read, so a lock is met at
  // BEGIN (and waited for) rather than as SQLITE_BUSY_SNAPSHOT halfway through.
  // Resolves whether this transaction was the grant's first revocation: read under the write lock, so of two at once
  // (two replays of one code) exactly one is first, and only that one is reported.
  const revokeGrant = db.transaction((grantId: string): boolean => {
    const now = Date.now();
    const first = s.isGrantRevoked.get(grantId, now) === undefined;
    s.upsertRevokedGrant.run(grantId, now + STORE_POLICY.revocationRetentionMs);
    s.deleteGrantTokens.run(grantId);
    return first;
  });

  // One row, whatever the number of tokens: the write lock is held for a moment, not for the deletes.
  const recordRevocation = db.transaction(({ clientId, userId }: DrainTarget) => {
    // The moment is read once the write lock is held (this process's clock, which authorizedAt comes from):
    // a save that committed before this transaction was authorized at or before it, so "authorized after
    // the moment" means "saved after the revocation", and such tokens are neither refused nor deleted by it.
    const now = Date.now();
    const tombstone = { client_id: clientId, revoked_at: now, expires_at: now + STORE_POLICY.revocationRetentionMs };
    if (userId === null) s.upsertRevokedClient.run(tombstone);
    else s.upsertRevokedClientUser.run({ ...tombstone, user_id: userId });
  });

  return {
    async saveTokens(access: TokenRecord, refresh: TokenRecord | null, options: SaveTokensOptions): Promise<boolean> {
      checkTokenPair(access, refresh);
      return save(access, refresh, authorizedAtMs(options), options.clientRevision);
    },
    async findAccessToken(tokenHash: string): Promise<TokenRecord | null> {
      return run(() => {
        const row = s.findToken.get(tokenHash, 'access', Date.now());
        return row ? valuesToToken(tokenHash, row) : null;
      });
    },
    async findRefreshToken(tokenHash: string): Promise<TokenRecord | null> {
      return run(() => {
        const row = s.findToken.get(tokenHash, 'refresh', Date.now());
        return row ? valuesToToken(tokenHash, row) : null;
      });
    },
    async revokeAccessToken(tokenHash: string): Promise<boolean> {
      // Whether this call removed it: of two revocations of one token at once, only the one that did is reported.
      return (await revoking(() => s.deleteAccessToken.run(tokenHash))).changes > 0;
    },
    async revokeGrant(grantId: string): Promise<boolean> {
      return revoking(() => revokeGrant(grantId));
    },
    async revokeClientTokens(clientId: string, userId?: string): Promise<void> {
      const target: DrainTarget = { clientId, userId: userId ?? null };
      // The feed moves at the tombstone's commit: from then on no cached token of it is served.
      await revoking(() => recordRevocation(target));
      await drainRevocation(drain, lockWait, guarded, target, closed);
    },
  };
}
