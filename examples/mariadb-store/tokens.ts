// The example MariaDB store's tokens: saveTokens checks the tombstones and inserts in one transaction, under their locks.
import type { TokenRecord, TokenStore } from 'express-oauth-router';
import { decodeList, encodeList } from './codec.js';
import type { MariaDb, Queryable } from './db.js';
import type { MariaDbStoreFaults } from './options.js';
import { createMariaDbRevocations } from './revocations.js';
import type { MariaDbTables } from './schema.js';
import { clientKey, grantKey, readTombstone, userKey, type TombstoneKey } from './tombstones.js';

interface TokenRow {
  token_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string | null;
  scope: string;
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
    scope: decodeList(row.scope),
    issuer: row.issuer,
    expiresAt: row.expires_at,
  };
}

/** The revocation rows a save depends on, in the one order every transaction locks them: clients, users, grants. */
function keysOf(t: MariaDbTables, records: readonly TokenRecord[]): TombstoneKey[] {
  const byId = new Map<string, TombstoneKey>();
  const add = (key: TombstoneKey): void => void byId.set(JSON.stringify([key.kind, ...key.values]), key);
  for (const r of records) add(clientKey(t, r.clientId));
  for (const r of records) if (r.userId !== null) add(userKey(t, r.clientId, r.userId));
  for (const r of records) add(grantKey(t, r.grantId));
  const rank = { client: 0, user: 1, grant: 2 } as const;
  return [...byId.entries()]
    .sort(([a, x], [b, y]) => rank[x.kind] - rank[y.kind] || (a < b ? -1 : 1))
    .map(([, key]) => key);
}

/**
 * Whether a revocation overtook the save: its grant is revoked, or its client or (client, user) was revoked
 * at or after `authorizedAt`. With `lock` the rows are read under their locks (see readTombstone).
 */
async function isRefused(q: Queryable, keys: readonly TombstoneKey[], authorizedAt: Date, lock: boolean): Promise<boolean> {
  const now = new Date();
  for (const key of keys) {
    const revokedAt = await readTombstone(q, key, now, lock);
    if (revokedAt !== null && (key.kind === 'grant' || revokedAt.getTime() >= authorizedAt.getTime())) return true;
  }
  return false;
}

/**
 * TokenStore on MariaDB. `saveTokens` is one transaction: it locks the revocation rows of the token's client,
 * user and grant, reads them, and inserts only if none refuses it. A revocation takes the same rows'
 * exclusive locks before it deletes, so a save racing it commits wholly before it (and is deleted by it) or
 * reads its tombstone (and is refused): exact, with no timing involved.
 * With the `revokedCheckOutsideTransaction` fault the tombstones are read by separate queries before the
 * insert's transaction, leaving a gap in which a revocation can pass: the bug of issue 7 (a).
 * @see RFC 6749 §4.1.2 (a replayed code revokes the grant), §10.4, RFC 7009 §2.1 (revocation).
 */
export function createMariaDbTokenStore(db: MariaDb, t: MariaDbTables, faults: MariaDbStoreFaults): Required<TokenStore> {
  async function insert(q: Queryable, records: readonly { kind: string; record: TokenRecord }[]): Promise<void> {
    await q.run(
      `INSERT INTO ${t.tokens} (kind, ${COLUMNS}) VALUES ${records.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      records.flatMap(({ kind, record: r }) => [
        kind, r.tokenHash, r.grantId, r.clientId, r.userId, encodeList(r.scope), r.issuer, r.expiresAt,
      ]),
    );
  }

  async function find(kind: 'access' | 'refresh', tokenHash: string): Promise<TokenRecord | null> {
    const [row] = await db.rows<TokenRow>(
      `SELECT ${COLUMNS} FROM ${t.tokens} WHERE token_hash = ? AND kind = ? AND expires_at > ?`,
      [tokenHash, kind, new Date()],
    );
    return row ? toToken(row) : null;
  }

  return {
    async saveTokens(access, refresh, { authorizedAt }) {
      const rows = [{ kind: 'access', record: access }];
      if (refresh) rows.push({ kind: 'refresh', record: refresh });
      const keys = keysOf(t, rows.map((row) => row.record));
      if (faults.revokedCheckOutsideTransaction === true) {
        if (await isRefused(db, keys, authorizedAt, false)) return false;
        await db.transaction((tx) => insert(tx, rows));
        return true;
      }
      return db.transaction(async (tx) => {
        if (await isRefused(tx, keys, authorizedAt, true)) return false;
        await insert(tx, rows);
        return true;
      });
    },
    findAccessToken: (tokenHash) => find('access', tokenHash),
    findRefreshToken: (tokenHash) => find('refresh', tokenHash),
    async revokeAccessToken(tokenHash) {
      // Only access tokens: a refresh token is revoked with its grant.
      await db.run(`DELETE FROM ${t.tokens} WHERE token_hash = ? AND kind = 'access'`, [tokenHash]);
    },
    ...createMariaDbRevocations(db, t),
  };
}
