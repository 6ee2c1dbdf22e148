// Every SQL statement of the SQLite store, prepared once when the store is created.
import type BetterSqlite3 from 'better-sqlite3';
import type { ClientRow, CodeRow, ConsentRow, TokenRow } from './rows.js';

type Statement<P extends unknown[] | object, R = unknown> = BetterSqlite3.Statement<P, R>;

/**
 * The prepared statements, with their positional parameters named in the types.
 * @see RFC 6749 §4.1.2 (single-use codes), RFC 7009 §2.1 (revocation).
 */
export interface SqliteStatements {
  readonly findClient: Statement<[clientId: string], ClientRow>;
  readonly upsertClient: Statement<ClientRow>;
  readonly listClients: Statement<[], ClientRow>;
  readonly insertCode: Statement<CodeRow>;
  /** The atomic consume: only the first of N racing calls matches `consumed_at IS NULL`. */
  readonly consumeCode: Statement<[consumedAt: number, codeHash: string, now: number], CodeRow>;
  readonly findLiveCodeGrant: Statement<[codeHash: string, now: number], { grant_id: string }>;
  readonly insertToken: Statement<TokenRow>;
  readonly findToken: Statement<[tokenHash: string, kind: string, now: number], TokenRow>;
  readonly deleteAccessToken: Statement<[tokenHash: string]>;
  readonly deleteGrantTokens: Statement<[grantId: string]>;
  readonly deleteClientTokens: Statement<[clientId: string]>;
  readonly deleteClientUserTokens: Statement<[clientId: string, userId: string]>;
  readonly findRevokedGrant: Statement<[grantId: string, now: number], { grant_id: string }>;
  readonly upsertRevokedGrant: Statement<[grantId: string, expiresAt: number]>;
  readonly findConsent: Statement<[userId: string, clientId: string], ConsentRow>;
  readonly upsertConsent: Statement<ConsentRow>;
  readonly deleteConsent: Statement<[userId: string, clientId: string]>;
  readonly listConsents: Statement<[userId: string], ConsentRow>;
  readonly sweepCodes: Statement<[now: number]>;
  readonly sweepTokens: Statement<[now: number]>;
  readonly sweepRevokedGrants: Statement<[now: number]>;
}

/**
 * Prepares every statement once, so a request costs no SQL parsing (DESIGN §3a: one round trip per step).
 * @see RFC 6749 §4.1.2 (single-use codes), RFC 7009 §2.1 (revocation).
 */
export function prepareSqliteStatements(db: BetterSqlite3.Database): SqliteStatements {
  return {
    findClient: db.prepare('SELECT * FROM clients WHERE client_id = ?'),
    upsertClient: db.prepare(`
      INSERT INTO clients (client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes,
                           require_pkce, credentials_issued_at, created_at, disabled)
      VALUES (@client_id, @client_secret_hash, @name, @flow, @redirect_uris, @allowed_scopes,
              @require_pkce, @credentials_issued_at, @created_at, @disabled)
      ON CONFLICT (client_id) DO UPDATE SET
        client_secret_hash = excluded.client_secret_hash, name = excluded.name, flow = excluded.flow,
        redirect_uris = excluded.redirect_uris, allowed_scopes = excluded.allowed_scopes,
        require_pkce = excluded.require_pkce, credentials_issued_at = excluded.credentials_issued_at,
        created_at = excluded.created_at, disabled = excluded.disabled`),
    listClients: db.prepare('SELECT * FROM clients ORDER BY created_at, client_id'),
    insertCode: db.prepare(`
      INSERT INTO codes (code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge,
                         issuer, expires_at, consumed_at)
      VALUES (@code_hash, @grant_id, @client_id, @user_id, @redirect_uri, @scope, @code_challenge,
              @issuer, @expires_at, @consumed_at)`),
    consumeCode: db.prepare(`
      UPDATE codes SET consumed_at = ?
      WHERE code_hash = ? AND consumed_at IS NULL AND expires_at > ?
      RETURNING *`),
    findLiveCodeGrant: db.prepare('SELECT grant_id FROM codes WHERE code_hash = ? AND expires_at > ?'),
    insertToken: db.prepare(`
      INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
      VALUES (@token_hash, @kind, @grant_id, @client_id, @user_id, @scope, @issuer, @expires_at)`),
    findToken: db.prepare('SELECT * FROM tokens WHERE token_hash = ? AND kind = ? AND expires_at > ?'),
    deleteAccessToken: db.prepare("DELETE FROM tokens WHERE token_hash = ? AND kind = 'access'"),
    deleteGrantTokens: db.prepare('DELETE FROM tokens WHERE grant_id = ?'),
    deleteClientTokens: db.prepare('DELETE FROM tokens WHERE client_id = ?'),
    deleteClientUserTokens: db.prepare('DELETE FROM tokens WHERE client_id = ? AND user_id = ?'),
    findRevokedGrant: db.prepare('SELECT grant_id FROM revoked_grants WHERE grant_id = ? AND expires_at > ?'),
    upsertRevokedGrant: db.prepare(`
      INSERT INTO revoked_grants (grant_id, expires_at) VALUES (?, ?)
      ON CONFLICT (grant_id) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`),
    findConsent: db.prepare('SELECT * FROM consents WHERE user_id = ? AND client_id = ?'),
    upsertConsent: db.prepare(`
      INSERT INTO consents (user_id, client_id, scope, granted_at)
      VALUES (@user_id, @client_id, @scope, @granted_at)
      ON CONFLICT (user_id, client_id) DO UPDATE SET
        scope = excluded.scope, granted_at = excluded.granted_at`),
    deleteConsent: db.prepare('DELETE FROM consents WHERE user_id = ? AND client_id = ?'),
    listConsents: db.prepare('SELECT * FROM consents WHERE user_id = ? ORDER BY granted_at, client_id'),
    sweepCodes: db.prepare('DELETE FROM codes WHERE expires_at <= ?'),
    sweepTokens: db.prepare('DELETE FROM tokens WHERE expires_at <= ?'),
    sweepRevokedGrants: db.prepare('DELETE FROM revoked_grants WHERE expires_at <= ?'),
  };
}
