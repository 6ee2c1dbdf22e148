// The example MariaDB store's revocations: tombstone first (taking its lock), then delete, in one transaction.
import type { TokenStore } from 'express-oauth-router';
import type { MariaDb } from './db.js';
import type { MariaDbTables } from './schema.js';
import { clientKey, grantKey, recordRevocations, userKey } from './tombstones.js';

/**
 * `revokeGrant` and `revokeClientTokens`. Each records its tombstone first: that statement takes the
 * revocation row's exclusive lock, which waits for every `saveTokens` holding it and makes every later one
 * wait for the commit and then read the tombstone. Only then does it delete, reading what committed before
 * (READ COMMITTED), so no token saved before the lock escapes the DELETE.
 * @see RFC 6749 §4.1.2 (a replayed code revokes the grant), RFC 7009 §2.1 (revocation takes effect at once).
 */
export function createMariaDbRevocations(
  db: MariaDb,
  t: MariaDbTables,
): Pick<Required<TokenStore>, 'revokeGrant' | 'revokeClientTokens'> {
  return {
    async revokeGrant(grantId) {
      await db.transaction(async (tx) => {
        await recordRevocations(tx, [grantKey(t, grantId)], new Date());
        // Codes stay: a used one keeps reporting `replayed` until it expires.
        await tx.run(`DELETE FROM ${t.tokens} WHERE grant_id = ?`, [grantId]);
      });
    },
    async revokeClientTokens(clientId, userId) {
      const filter = userId === undefined ? 'client_id = ?' : 'client_id = ? AND user_id = ?';
      const values = userId === undefined ? [clientId] : [clientId, userId];
      await db.transaction(async (tx) => {
        const now = new Date();
        await recordRevocations(tx, [userId === undefined ? clientKey(t, clientId) : userKey(t, clientId, userId)], now);
        // A refresh under way read one of these refresh tokens already: its grant's tombstone refuses what it saves.
        const grants = await tx.rows<{ grant_id: string }>(
          `SELECT DISTINCT grant_id FROM ${t.tokens} WHERE ${filter} AND kind = 'refresh'`,
          values,
        );
        await recordRevocations(tx, grants.map((row) => grantKey(t, row.grant_id)), now);
        await tx.run(`DELETE FROM ${t.tokens} WHERE ${filter}`, values);
      });
    },
  };
}
