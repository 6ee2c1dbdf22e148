// PostgreSQL code exchange in one statement: the code's consume and its tokens' save, in one transaction.
import type { AuthorizationCodeRecord, CodeRedemption, RedeemResult } from '../contract.js';
import type { PostgresTables } from './schema.js';
import { prepareSql, type PostgresRunner } from './query.js';
import type { BatcherLimits } from './batcher.js';
import { createBatchedLookup } from './batched-lookup.js';
import { codeRecord, toCodeRecord, type CodeRow } from './records.js';
import { saveItemOf, type RevocationLockKeys } from './tokens.js';
import { parseJsonRow } from './json-row.js';

/** A redemption's row: a consume's, and for the consumed code what the save function answered. */
interface RedeemRow extends CodeRow {
  saved: 'saved' | 'refused' | null;
}

/**
 * `Store.codeRedemption` on PostgreSQL.
 * - `peekCode` is a lookup like `findAccessToken`'s: batched with the others made meanwhile, and read while the
 *   client is authenticated, so it costs the exchange no round trip of its own.
 * - `redeemCode` is one statement: the consume's UPDATE (the code's row lock: of N concurrent calls exactly one
 *   updates it, as `consumeCode`), and, only on the row it updated and only for tokens of its grant, the save
 *   function `saveTokens` calls (`save_tokens_batch`, waiting for its locks as a save of its own does), whose
 *   statements take their snapshots after its locks are granted, so it judges the tombstones exactly as a
 *   `saveTokens` would. One transaction commits both, synchronously: a fault keeps neither. One round trip and
 *   one WAL flush for the exchange, where `consumeCode` and `saveTokens` took two round trips in turn.
 * Locks are taken in the order code row, advisory lock, grant row: no revocation takes a code's row, and
 * `deleteClient` takes none of the others, so no wait forms a cycle. On a pool whose default isolation is not
 * READ COMMITTED, the statement runs in a READ COMMITTED transaction, as the save does.
 * @see RFC 6749 §4.1.2 ("The client MUST NOT use the authorization code more than once"), §4.1.3.
 */
export function createPostgresCodeRedemption(
  db: PostgresRunner,
  t: PostgresTables,
  keys: RevocationLockKeys,
  readCommitted: boolean,
  batching: BatcherLimits,
): CodeRedemption {
  const peekCode = createBatchedLookup<CodeRow, AuthorizationCodeRecord>(db, {
    sql: (match) => `SELECT code_hash, ${codeRecord('')} AS r FROM ${t.codes}
       WHERE code_hash ${match} AND consumed_at IS NULL AND expires_at > $2`,
    keyOf: (row) => row.code_hash,
    toRecord: (row) => toCodeRecord(row.code_hash, row.r),
    extra: () => new Date(),
  }, batching);
  const redeem = prepareSql(
    `WITH won AS (
       UPDATE ${t.codes} SET consumed_at = $2
       WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > $2
       RETURNING code_hash, grant_id, ${codeRecord('')} AS r)
     SELECT 'consumed' AS outcome, code_hash, r,
       CASE WHEN grant_id = $3 THEN (${t.saveTokensBatch}($4::jsonb, $2, true))[1] ELSE 'refused' END AS saved
     FROM won
     UNION ALL
     SELECT 'replayed' AS outcome, code_hash, json_build_array(grant_id)::text AS r, NULL AS saved FROM ${t.codes}
     WHERE code_hash = $1 AND expires_at > $2 AND NOT EXISTS (SELECT 1 FROM won)`,
  );
  return {
    peekCode,
    async redeemCode(codeHash, access, refresh, options): Promise<RedeemResult> {
      const item = { ...saveItemOf(keys, access, refresh, options), i: 1 };
      const values = [codeHash, new Date(), access.grantId, JSON.stringify([item])];
      const { rows } = readCommitted
        ? await db.query<RedeemRow>(redeem, values)
        : await db.transaction((tx) => tx.query<RedeemRow>(redeem, values));
      const row = rows[0];
      if (!row) return { kind: 'not_found' };
      if (row.outcome === 'replayed') return { kind: 'replayed', grantId: parseJsonRow(row.r)[0] as string };
      return { kind: 'consumed', record: toCodeRecord(row.code_hash, row.r), saved: row.saved === 'saved' };
    },
  };
}
