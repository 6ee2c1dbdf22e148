// PostgreSQL access and refresh tokens: saves and revocations serialised by locks, so revocation is exact.
import type { SaveTokensOptions, TokenRecord, TokenStore } from '../contract.js';
import { STORE_POLICY, checkTokenPair } from '../store-policy.js';
import type { PostgresTables } from './schema.js';
import { lockKey, prepareSql, type PostgresRunner } from './query.js';
import { createBatcher, earliest, judgedAlone, type BatchOutcome, type BatcherLimits } from './batcher.js';
import { createBatchedLookup } from './batched-lookup.js';
import { dateOf, jsonRowSql, parseJsonRow } from './json-row.js';
import { isoTimestamp } from './iso-timestamp.js';
import { setBounded } from '../set-bounded.js';

/** A token's row: its hash, and the rest of the record as a JSON row (`TOKEN_RECORD`). */
interface TokenRow {
  token_hash: string;
  r: string;
}

/** The token's columns but its hash, in the order `toToken` reads them. */
const TOKEN_RECORD = jsonRowSql(['grant_id', 'client_id', 'user_id', 'scope', 'issuer', ['expires_at', 'ms']]);

function toToken(row: TokenRow): TokenRecord {
  const [grantId, clientId, userId, scope, issuer, expiresAt] = parseJsonRow(row.r);
  return {
    tokenHash: row.token_hash,
    grantId: grantId as string,
    clientId: clientId as string,
    userId: userId as string | null,
    scope: scope as string[],
    issuer: issuer as string,
    expiresAt: dateOf(expiresAt),
  };
}

/** The advisory-lock keys of an integration, and of one user at it, in one store's namespace. */
export interface RevocationLockKeys {
  client(clientId: string): bigint;
  user(clientId: string, userId: string): bigint;
}

/** Far past most deployments' number of integrations; past it the oldest remembered key is forgotten for each new one. */
const MAX_REMEMBERED_KEYS = 10_000;

/**
 * Lock keys scoped to `namespace` (one store's tables), so stores sharing a database rarely share a key. An
 * integration's key is remembered: every save needs it, and deriving it (JSON, then SHA-256) was about 2 % of a
 * token request's instructions. A user's key is derived each time (users are many, and only their tokens need it).
 */
export function createRevocationLockKeys(namespace: string): RevocationLockKeys {
  const clientKeys = new Map<string, bigint>();
  return {
    client(clientId) {
      let key = clientKeys.get(clientId);
      if (key === undefined) {
        key = lockKey(namespace, 'client', clientId);
        setBounded(clientKeys, clientId, key, MAX_REMEMBERED_KEYS);
      }
      return key;
    },
    user: (clientId, userId) => lockKey(namespace, 'user', clientId, userId),
  };
}

/** Tokens an integration-wide (or user-wide) revocation deletes per statement: each stays well inside `queryTimeoutMs`. */
export const POSTGRES_REVOCATION_CHUNK = 10_000;

/**
 * The statements of the revocations. `mark*` record the tombstones: the integration's or the user's
 * (revoked_at keeps the latest moment); `take*` then, a chunk of tokens at a time, the grant of each refresh token
 * about to be deleted, in grant order (so two revocations lock shared grant rows in one order), answering the
 * chunk's token keys, which `deleteTokens` removes. Parameters: $1 the integration or grant, $2 the moment, $3 the
 * tombstone's expiry, $4 the user (mark), $4 the chunk size and $5 the user (take).
 */
function revocationStatements(t: PostgresTables, notify: string) {
  const takeChunk = (where: string): string =>
    `WITH chunk AS (SELECT token_hash, grant_id, kind FROM ${t.tokens} WHERE ${where} LIMIT $4),
     marked AS (
       INSERT INTO ${t.grants} AS g (grant_id, revoked_at, expires_at)
       SELECT DISTINCT grant_id, $2::timestamptz, $3::timestamptz FROM chunk WHERE kind = 'refresh' ORDER BY grant_id
       ON CONFLICT (grant_id) DO UPDATE SET revoked_at = COALESCE(g.revoked_at, EXCLUDED.revoked_at),
         expires_at = GREATEST(g.expires_at, EXCLUDED.expires_at))
     SELECT COALESCE(json_agg(token_hash), '[]')::text AS hashes FROM chunk`;
  const latest = `revoked_at = GREATEST(r.revoked_at, EXCLUDED.revoked_at),
       expires_at = GREATEST(r.expires_at, EXCLUDED.expires_at)`;
  return {
    // A row back only when this statement revoked the grant (a new row, or a live one marked): ON CONFLICT's WHERE
    // is judged on the row version it locked, so of two revocations at once exactly one gets it (revokeGrant's result).
    markGrant: prepareSql(`INSERT INTO ${t.grants} AS g (grant_id, revoked_at, expires_at) VALUES ($1, $2, $3)
      ON CONFLICT (grant_id) DO UPDATE SET revoked_at = EXCLUDED.revoked_at,
        expires_at = GREATEST(g.expires_at, EXCLUDED.expires_at) WHERE g.revoked_at IS NULL
      RETURNING 1 AS first`),
    // A grant revoked before: its tombstone is kept as long as this revocation asks, as it was before markGrant
    // learnt to tell the first revocation apart.
    extendGrant: prepareSql(`UPDATE ${t.grants} SET expires_at = GREATEST(expires_at, $2) WHERE grant_id = $1`),
    // Each delete also NOTIFYs the revocation feed's channel, delivered to listeners at COMMIT, in the same
    // round trip (a data-modifying CTE runs whether or not the SELECT reads it).
    deleteGrant: prepareSql(`WITH gone AS (DELETE FROM ${t.tokens} WHERE grant_id = $1) SELECT ${notify}`),
    markClient: prepareSql(`INSERT INTO ${t.clientRevocations} AS r (client_id, revoked_at, expires_at) VALUES ($1, $2, $3)
        ON CONFLICT (client_id) DO UPDATE SET ${latest}`),
    takeClient: prepareSql(takeChunk('client_id = $1')),
    markUser: prepareSql(`INSERT INTO ${t.userRevocations} AS r (client_id, user_id, revoked_at, expires_at) VALUES ($1, $4, $2, $3)
        ON CONFLICT (client_id, user_id) DO UPDATE SET ${latest}`),
    takeUser: prepareSql(takeChunk('client_id = $1 AND user_id = $5')),
    deleteTokens: prepareSql(`WITH gone AS (DELETE FROM ${t.tokens} WHERE token_hash = ANY($1::text[])) SELECT ${notify}`),
  };
}

/** One `saveTokens` call, as the batch function reads it (`i`: its place in the batch, from 1). */
interface SaveItem {
  i: number;
  grant_id: string;
  grant_expires_at: string;
  client_id: string;
  user_id: string | null;
  authorized_at: string;
  /** The integration copy's xmin (`SaveTokensOptions.clientRevision`), or null: checked since migration 8. */
  client_revision: string | null;
  /** `SaveTokensOptions.newGrant`: no grant row is written (migration 9). */
  new_grant: boolean;
  client_key: string;
  user_key: string | null;
  access: string;
  access_scope: readonly string[];
  access_issuer: string;
  access_expires_at: string;
  refresh: string | null;
  refresh_scope: readonly string[] | null;
  refresh_issuer: string | null;
  refresh_expires_at: string | null;
}

/** What the batch function answers for each call. */
type SaveResult = 'saved' | 'refused' | 'busy';

/**
 * TokenStore on PostgreSQL. Revocation is exact: a `saveTokens` racing a revocation is either wholly before
 * it (and deleted by it) or wholly after it (and refused by its tombstone). In READ COMMITTED a check and
 * an insert in one transaction are not enough by themselves: a statement's snapshot misses a tombstone
 * committed after the statement began, and a DELETE's snapshot misses a token committed after it began.
 * So the two sides are ordered by locks, each taken before the statements that read, so that those
 * statements take their snapshots after the lock is granted:
 *
 * - `saveTokens` calls the schema's `save_tokens_batch` function (one round trip for every call that arrived
 *   while the previous batch was at the database, see batcher.ts). It takes `pg_advisory_xact_lock_shared`
 *   on each call's integration key (and on the (integration, user) key for a token with a user), then, in
 *   statements with new snapshots (a VOLATILE function in READ COMMITTED), checks the tombstones (and, for a
 *   call with `clientRevision`, that the integration's row is still the version its copy was read from: any
 *   change committed before this statement's snapshot refuses the call; one committed after it is ordered
 *   after the save, as it would be after a lookup of its own), upserts the
 *   grant rows (their row locks; none for a call whose grant is new, `SaveTokensOptions.newGrant`, which no
 *   revokeGrant can race, and whose tombstone is only read) and inserts the tokens; the locks last until the
 *   statement commits. Saves
 *   share the lock, so they never wait for one another. In a batch the locks are only tried: a call whose
 *   key a revocation holds comes back 'busy' and is sent again on its own, waiting for the lock as above,
 *   so it is judged after that revocation commits while the rest of its batch goes on.
 * - `revokeClientTokens(clientId[, userId])`: BEGIN and `pg_advisory_xact_lock` (exclusive) on the
 *   integration's key, or on the (integration, user) key, in one round trip; then the tombstone; then, a chunk of
 *   `POSTGRES_REVOCATION_CHUNK` tokens at a time (two statements each: the chunk's grant tombstones, then its
 *   DELETE), until a chunk comes back short; then COMMIT. A save holding the shared lock commits before the
 *   revocation is granted its lock, so the DELETEs, whose snapshots are taken after that, remove its tokens; a save that asks for the lock
 *   after the revocation got it waits for the revocation's COMMIT, and its check then sees the tombstone.
 * - `revokeGrant`: the grant row's lock does the same. The revocation marks the row revoked (waiting for a
 *   save that holds the row) and then, in a new statement, deletes the grant's tokens; a save that comes
 *   after it waits on the row and finds it revoked (ON CONFLICT judges the newest row version).
 *
 * Every transaction takes its locks in one order (advisory lock, then grant rows in grant order, then
 * token rows) and the sweeper skips locked rows, so they do not wait on one another in a cycle; a deadlock
 * PostgreSQL still broke would reject with StoreUnavailableError (retryable), never leave a token behind.
 * Each step is one round trip but the revocations (four, as BEGIN carries the lock). On a pool whose
 * default isolation is not READ COMMITTED (`readCommitted` false), each batch is wrapped in a READ
 * COMMITTED transaction (three round trips instead of one); the function refuses to run under another level.
 * Every statement that deletes tokens also calls `pg_notify` on `feed.channel` in the same transaction (sent
 * at COMMIT: the revocation feed of every instance), and each revocation calls `feed.bump()` before it
 * resolves, so this instance's own mark has moved by the time its caller goes on.
 * @see RFC 6749 §4.1.2 (a replayed code SHOULD revoke the tokens issued from it), RFC 7009 §2.1.
 */
export function createPostgresTokenStore(
  db: PostgresRunner,
  t: PostgresTables,
  keys: RevocationLockKeys,
  readCommitted: boolean,
  feed: { readonly channel: string; bump(): void },
  batching: BatcherLimits,
): Required<TokenStore> {
  // A JSON array in text, parsed here: the host's pool may parse text[] its own way (json-row.ts).
  const saveBatch = prepareSql(`SELECT array_to_json(${t.saveTokensBatch}($1::jsonb, $2::timestamptz, $3::boolean))::text AS results`);
  // Lookups made while one is at the database share one SELECT; "now" is read when the batch is sent, so a
  // token that expired meanwhile reads absent, as it would at that moment.
  const findKind = (kind: string) =>
    createBatchedLookup<TokenRow, TokenRecord>(db, {
      sql: (match) => `SELECT token_hash, ${TOKEN_RECORD} AS r FROM ${t.tokens}
         WHERE token_hash ${match} AND kind = '${kind}' AND expires_at > $2`,
      keyOf: (row) => row.token_hash,
      toRecord: toToken,
      extra: () => new Date(),
    }, batching);
  const findAccess = findKind('access');
  const findRefresh = findKind('refresh');
  // The channel is a checked hex name (revocation-feed.ts), so it can be spliced in as a literal.
  const notify = `pg_notify('${feed.channel}', '')`;
  // Notifies only when a token went: a revocation of an unknown token must not flush every instance's cache.
  const revokeAccess = prepareSql(
    `WITH gone AS (DELETE FROM ${t.tokens} WHERE token_hash = $1 AND kind = 'access' RETURNING 1)
     SELECT ${notify} FROM gone`,
  );
  const revocations = revocationStatements(t, notify);

  /** Runs a revocation, then moves the feed's mark before the caller hears of it (committed or not: a failed
   * COMMIT may still have committed, and a spurious move only costs a cache miss). */
  async function revoking(run: () => Promise<unknown>): Promise<void> {
    try {
      await run();
    } finally {
      feed.bump();
    }
  }

  /**
   * One statement for `items`, sent by `sendBy` or not at all (query.ts); `wait` (one item only) waits for its locks
   * instead of answering 'busy'.
   */
  async function saveItems(items: readonly SaveItem[], wait: boolean, sendBy: number): Promise<readonly SaveResult[]> {
    const values = [JSON.stringify(items.map((item, n) => ({ ...item, i: n + 1 }))), new Date(), wait];
    const { rows } = readCommitted
      ? await db.query<{ results: string }>(saveBatch, values, sendBy)
      : await db.transaction((tx) => tx.query<{ results: string }>(saveBatch, values), {}, sendBy);
    const results = rows[0] ? (parseJsonRow(rows[0].results) as SaveResult[]) : undefined;
    if (!results || results.length !== items.length) throw new Error('save_tokens_batch answered no result per call');
    return results;
  }

  /**
   * One call on its own, waiting for its locks: a call the batch found locked, or one its batch failed. Sent only
   * by the call's own moment (`sendBy`): past it the call fails with nothing of it written, since the batch wrote
   * nothing of it either ('busy', or a batch that failed as a whole).
   */
  async function saveAlone(item: SaveItem, sendBy: number): Promise<boolean> {
    const [result] = await saveItems([item], true, sendBy);
    return result === 'saved';
  }

  // A call the batch could not judge without waiting ('busy') is answered by a call of its own, outside the
  // batch's slot, so the next batch goes out meanwhile. A batch that fails for a reason other than the
  // database being out of reach (committing nothing) sends each call alone, so that one call's fault (a
  // repeated token hash) fails only that call, as it would have alone.
  const saveBatched = createBatcher<SaveItem, boolean>(async (items, sendBy) => {
    let results: readonly SaveResult[];
    try {
      results = await saveItems(items, false, earliest(sendBy));
    } catch (error) {
      if (items.length === 1 || !judgedAlone(error)) throw error;
      return items.map((item, n): BatchOutcome<boolean> => ({ ok: true, value: saveAlone(item, sendBy[n]!) }));
    }
    return results.map((result, n): BatchOutcome<boolean> =>
      result === 'busy' ? { ok: true, value: saveAlone(items[n]!, sendBy[n]!) } : { ok: true, value: result === 'saved' },
    );
  }, batching);

  return {
    async saveTokens(access: TokenRecord, refresh: TokenRecord | null, options: SaveTokensOptions): Promise<boolean> {
      checkTokenPair(access, refresh);
      const lastExpiry = refresh && refresh.expiresAt > access.expiresAt ? refresh.expiresAt : access.expiresAt;
      return saveBatched({
        i: 0,
        grant_id: access.grantId,
        grant_expires_at: isoTimestamp(lastExpiry),
        client_id: access.clientId,
        user_id: access.userId,
        authorized_at: isoTimestamp(options.authorizedAt),
        client_revision: options.clientRevision ?? null,
        new_grant: options.newGrant === true,
        client_key: String(keys.client(access.clientId)),
        user_key: access.userId === null ? null : String(keys.user(access.clientId, access.userId)),
        access: access.tokenHash,
        access_scope: access.scope,
        access_issuer: access.issuer,
        access_expires_at: isoTimestamp(access.expiresAt),
        refresh: refresh?.tokenHash ?? null,
        refresh_scope: refresh?.scope ?? null,
        refresh_issuer: refresh?.issuer ?? null,
        refresh_expires_at: refresh ? isoTimestamp(refresh.expiresAt) : null,
      });
    },
    findAccessToken: findAccess,
    findRefreshToken: findRefresh,
    async revokeAccessToken(tokenHash) {
      let removed = false;
      // A row back only for a token this statement deleted: of two revocations of one token, one is reported.
      await revoking(async () => { removed = (await db.query(revokeAccess, [tokenHash])).rows.length > 0; });
      return removed;
    },
    async revokeGrant(grantId) {
      const now = Date.now();
      const until = new Date(now + STORE_POLICY.revocationRetentionMs);
      let first = false;
      await revoking(() => db.transaction(async (tx) => {
        first = (await tx.query(revocations.markGrant, [grantId, new Date(now), until])).rows.length > 0;
        if (!first) await tx.query(revocations.extendGrant, [grantId, until]);
        // Codes stay: a used one must keep reporting `replayed` until it expires (contract, CodeStore).
        await tx.query(revocations.deleteGrant, [grantId]);
      }));
      return first;
    },
    async revokeClientTokens(clientId, userId) {
      // The app's clock, not the database's: authorizedAt, which this moment is compared with, is the app's.
      const now = Date.now();
      const moment = [new Date(now), new Date(now + STORE_POLICY.revocationRetentionMs)];
      await revoking(() => db.transaction(
        async (tx) => {
          if (userId === undefined) await tx.query(revocations.markClient, [clientId, ...moment]);
          else await tx.query(revocations.markUser, [clientId, ...moment, userId]);
          // A chunk per statement, all in this transaction: one DELETE of millions of tokens outlasted
          // queryTimeoutMs and rolled back, tombstone and all, leaving every token working.
          const take = userId === undefined ? revocations.takeClient : revocations.takeUser;
          const params = userId === undefined ? [clientId, ...moment, POSTGRES_REVOCATION_CHUNK] : [clientId, ...moment, POSTGRES_REVOCATION_CHUNK, userId];
          for (;;) {
            const { rows } = await tx.query<{ hashes: string }>(take, params);
            const hashes = parseJsonRow(rows[0]?.hashes) as string[];
            if (hashes.length > 0) await tx.query(revocations.deleteTokens, [hashes]);
            if (hashes.length < POSTGRES_REVOCATION_CHUNK) break;
          }
        },
        { exclusive: [userId === undefined ? keys.client(clientId) : keys.user(clientId, userId)] },
      ));
    },
  };
}
