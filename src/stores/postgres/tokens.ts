// PostgreSQL access and refresh tokens, grouped by grant, with revocation that issuance cannot outrun.
import type { PoolClient } from 'pg';
import type { TokenRecord, TokenStore } from '../contract.js';
import type { PostgresTables } from './schema.js';
import { prepareSql, type PostgresRunner } from './query.js';

/** How long a revoked grant is remembered, so that saveTokens refuses it (the contract says ≥ 24 h). */
export const REVOKED_GRANT_TTL_MS = 24 * 60 * 60 * 1000;

interface TokenRow {
  token_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string | null;
  scope: string[];
  issuer: string;
  expires_at: Date;
}

const COLUMNS = 'token_hash, grant_id, client_id, user_id, scope, issuer, expires_at';

function toToken(row: TokenRow): TokenRecord {
  return {
    tokenHash: row.token_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    scope: row.scope,
    issuer: row.issuer,
    expiresAt: row.expires_at,
  };
}

function tokenValues(r: TokenRecord): unknown[] {
  return [r.tokenHash, r.clientId, r.userId, [...r.scope], r.issuer, r.expiresAt];
}

/**
 * TokenStore on PostgreSQL.
 *
 * The grants table holds one row per grant. saveTokens upserts that row with
 * `ON CONFLICT DO UPDATE … WHERE revoked_at IS NULL` and inserts the tokens only if the upsert returned
 * it, all in one statement: the upsert takes the grant's row lock until commit. revokeGrant first marks
 * the row revoked (waiting for any saveTokens holding the lock), then, in a new statement with a fresh
 * snapshot, deletes the grant's tokens: a token whose issuance raced the revocation is either refused
 * or committed before the DELETE looks, never left behind.
 * @see RFC 6749 §4.1.2 (a replayed code SHOULD revoke the tokens issued from it), RFC 7009 §2.1.
 */
export function createPostgresTokenStore(db: PostgresRunner, t: PostgresTables): TokenStore {
  const grantUpsert = `INSERT INTO ${t.grants} AS g (grant_id, expires_at) VALUES ($1, $2)
       ON CONFLICT (grant_id) DO UPDATE SET expires_at = GREATEST(g.expires_at, EXCLUDED.expires_at)
       WHERE g.revoked_at IS NULL RETURNING grant_id`;
  const row = (n: number, kind: string): string =>
    `($${n}::text, '${kind}', $1::text, $${n + 1}::text, $${n + 2}::text, $${n + 3}::text[], $${n + 4}::text, $${n + 5}::timestamptz)`;
  const insertTokens = (rows: string): string =>
    `WITH live AS (${grantUpsert})
     INSERT INTO ${t.tokens} (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
     SELECT v.* FROM (VALUES ${rows}) AS v(token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
     WHERE EXISTS (SELECT 1 FROM live)
     RETURNING token_hash`;
  const saveAccess = prepareSql(insertTokens(row(3, 'access')));
  const saveBoth = prepareSql(insertTokens(`${row(3, 'access')}, ${row(9, 'refresh')}`));
  const findKind = (kind: string) =>
    prepareSql(`SELECT ${COLUMNS} FROM ${t.tokens} WHERE token_hash = $1 AND kind = '${kind}' AND expires_at > $2`);
  const findAccess = findKind('access');
  const findRefresh = findKind('refresh');
  const revokeAccess = prepareSql(`DELETE FROM ${t.tokens} WHERE token_hash = $1 AND kind = 'access'`);
  const markRevoked = `INSERT INTO ${t.grants} AS g (grant_id, revoked_at, expires_at) VALUES ($1, $2, $3)
     ON CONFLICT (grant_id) DO UPDATE SET revoked_at = COALESCE(g.revoked_at, EXCLUDED.revoked_at),
       expires_at = GREATEST(g.expires_at, EXCLUDED.expires_at)`;
  const deleteGrantTokens = `DELETE FROM ${t.tokens} WHERE grant_id = $1`;
  const revokeClient = prepareSql(`DELETE FROM ${t.tokens} WHERE client_id = $1`);
  const revokeClientUser = prepareSql(`DELETE FROM ${t.tokens} WHERE client_id = $1 AND user_id = $2`);

  async function find(sql: ReturnType<typeof prepareSql>, tokenHash: string): Promise<TokenRecord | null> {
    const { rows } = await db.query<TokenRow>(sql, [tokenHash, new Date()]);
    return rows[0] ? toToken(rows[0]) : null;
  }

  return {
    async saveTokens(access, refresh) {
      if (refresh && refresh.grantId !== access.grantId) {
        throw new TypeError('saveTokens: the access and refresh token must belong to the same grant');
      }
      const lastExpiry = refresh && refresh.expiresAt > access.expiresAt ? refresh.expiresAt : access.expiresAt;
      const values = [access.grantId, lastExpiry, ...tokenValues(access)];
      if (refresh) values.push(...tokenValues(refresh));
      const { rowCount } = await db.query(refresh ? saveBoth : saveAccess, values);
      return (rowCount ?? 0) > 0;
    },
    findAccessToken: (tokenHash) => find(findAccess, tokenHash),
    findRefreshToken: (tokenHash) => find(findRefresh, tokenHash),
    async revokeAccessToken(tokenHash) {
      await db.query(revokeAccess, [tokenHash]);
    },
    async revokeGrant(grantId) {
      const now = new Date();
      await db.transaction(async (client: PoolClient) => {
        await client.query(markRevoked, [grantId, now, new Date(now.getTime() + REVOKED_GRANT_TTL_MS)]);
        // Codes stay: a used one must keep reporting `replayed` until it expires (contract, CodeStore).
        await client.query(deleteGrantTokens, [grantId]);
      });
    },
    async revokeClientTokens(clientId, userId) {
      if (userId === undefined) await db.query(revokeClient, [clientId]);
      else await db.query(revokeClientUser, [clientId, userId]);
    },
  };
}
