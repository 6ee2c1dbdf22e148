// The example MariaDB store's authorization codes: single use, decided under the code row's lock.
import type { AuthorizationCodeRecord, CodeStore } from 'express-oauth-router';
import { decodeList, encodeList } from './codec.js';
import type { MariaDb } from './db.js';
import type { MariaDbTables } from './schema.js';

interface CodeRow {
  code_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scope: string;
  code_challenge: string | null;
  issuer: string;
  issued_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
}

const COLUMNS = `code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge, issuer, issued_at,
  expires_at`;

function toCode(row: CodeRow): AuthorizationCodeRecord {
  return {
    codeHash: row.code_hash,
    grantId: row.grant_id,
    clientId: row.client_id,
    userId: row.user_id,
    redirectUri: row.redirect_uri,
    scope: decodeList(row.scope),
    codeChallenge: row.code_challenge,
    issuer: row.issuer,
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
  };
}

/**
 * CodeStore on MariaDB. `consumeCode` reads the code with `SELECT … FOR UPDATE` and marks it used in the
 * same transaction: of N concurrent calls one takes the row lock first and marks the code; the others wait
 * for its commit, then read `consumed_at` set and report a replay. A used code stays until it expires, so a
 * replay keeps being told apart from an unknown code.
 * @see RFC 6749 §4.1.2 ("The client MUST NOT use the authorization code more than once").
 */
export function createMariaDbCodeStore(db: MariaDb, t: MariaDbTables): CodeStore {
  return {
    async saveCode(r) {
      await db.run(`INSERT INTO ${t.codes} (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        r.codeHash, r.grantId, r.clientId, r.userId, r.redirectUri, encodeList(r.scope), r.codeChallenge, r.issuer,
        r.issuedAt, r.expiresAt,
      ]);
    },
    async consumeCode(codeHash) {
      return db.transaction(async (tx) => {
        const now = new Date();
        const [row] = await tx.rows<CodeRow>(`SELECT ${COLUMNS}, consumed_at FROM ${t.codes} WHERE code_hash = ? FOR UPDATE`, [
          codeHash,
        ]);
        if (!row || row.expires_at.getTime() <= now.getTime()) return { kind: 'not_found' } as const;
        if (row.consumed_at !== null) return { kind: 'replayed', grantId: row.grant_id } as const;
        await tx.run(`UPDATE ${t.codes} SET consumed_at = ? WHERE code_hash = ?`, [now, codeHash]);
        return { kind: 'consumed', record: toCode(row) } as const;
      });
    },
  };
}
