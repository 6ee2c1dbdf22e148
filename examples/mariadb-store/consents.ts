// The example MariaDB store's consents: one row per (user, integration), replaced on save.
import type { ConsentRecord, ConsentStore } from 'express-oauth-router';
import { decodeList, encodeList } from './codec.js';
import type { MariaDb } from './db.js';
import type { MariaDbTables } from './schema.js';

interface ConsentRow {
  user_id: string;
  client_id: string;
  scope: string;
  granted_at: Date;
}

function toConsent(row: ConsentRow): ConsentRecord {
  return { userId: row.user_id, clientId: row.client_id, scope: decodeList(row.scope), grantedAt: row.granted_at };
}

/**
 * ConsentStore on MariaDB: insert or replace by (user_id, client_id); listed oldest first, then by client id
 * in binary order (the columns' `utf8mb4_nopad_bin` collation orders as the package's `compareConsents`).
 * @see RFC 6749 §4.1.1 (the resource owner's approval), §10.2.
 */
export function createMariaDbConsentStore(db: MariaDb, t: MariaDbTables): ConsentStore {
  const columns = 'user_id, client_id, scope, granted_at';
  return {
    async findConsent(userId, clientId) {
      const [row] = await db.rows<ConsentRow>(`SELECT ${columns} FROM ${t.consents} WHERE user_id = ? AND client_id = ?`, [
        userId, clientId,
      ]);
      return row ? toConsent(row) : null;
    },
    async saveConsent(r) {
      await db.run(
        `INSERT INTO ${t.consents} (${columns}) VALUES (?, ?, ?, ?)
         ON DUPLICATE KEY UPDATE scope = VALUES(scope), granted_at = VALUES(granted_at)`,
        [r.userId, r.clientId, encodeList(r.scope), r.grantedAt],
      );
    },
    async revokeConsent(userId, clientId) {
      await db.run(`DELETE FROM ${t.consents} WHERE user_id = ? AND client_id = ?`, [userId, clientId]);
    },
    async listConsents(userId) {
      const rows = await db.rows<ConsentRow>(
        `SELECT ${columns} FROM ${t.consents} WHERE user_id = ? ORDER BY granted_at, client_id`,
        [userId],
      );
      return rows.map(toConsent);
    },
  };
}
