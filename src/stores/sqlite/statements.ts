// Every SQL statement of the SQLite store, prepared once when the store is created.
import type { ClientRowValues } from './client-revision.js';
import type { SqliteConnection, SqliteStatement } from './driver.js';
import { CODE_RECORD_COLUMNS, TOKEN_RECORD_COLUMNS } from './rows.js';
import type { ClientChangesRow, ClientRow, CodeRecordValues, CodeRow, ConsentRow, TokenRecordValues, TokenValues } from './rows.js';

type Statement<P extends unknown[] | object, R = unknown> = SqliteStatement<P, R>;

/**
 * Values of the `saveTokens` refusal check, in the order of its placeholders: the token's ids, its `authorizedAt`
 * and the clock (ms), each as often as the check reads it; the grant again after each revocation tombstone, for
 * its refresh tokens still waiting for that revocation's drain. Positional, not named: better-sqlite3 binds a named
 * parameter by looking its key up on the object, which cost 1 µs more per check (BENCHMARKS.md, seventh pass).
 * @see RFC 7009 §2.1.
 */
export type RefusalValues = [
  grantId: string, now: number,
  clientId: string, authorizedAt: number, now: number, grantId: string,
  clientId: string, userId: string | null, authorizedAt: number, now: number, grantId: string,
];

/** `RefusalValues`, then every column of the integration's row as its copy holds it (`isRefusedAtRevision`). */
export type RevisionRefusalValues = [...RefusalValues, ...ClientRowValues];

/** Parameters of an integration's revocation tombstone: its moment and until when it is kept, in ms. @see RFC 7009 §2.1. */
export interface RevocationParams {
  readonly client_id: string;
  readonly revoked_at: number;
  readonly expires_at: number;
}

/** Parameters of the tombstone of one user's tokens at an integration. @see RFC 7009 §2.1. */
export interface UserRevocationParams extends RevocationParams {
  readonly user_id: string;
}

/**
 * A refresh token of the grant (the placeholder) that the tombstone `r` refuses and its drain has not deleted yet.
 * A refresh that read it before the tombstone committed may save with a later `authorizedAt`; once the drain deletes
 * it, the grant's own tombstone, written in the same transaction (drain.ts), refuses that save instead. Evaluated only
 * while the integration or user has a drain left: one search of the grant's index then.
 */
const REFRESH_TOKEN_UNDER_IT = `EXISTS (SELECT 1 FROM tokens t WHERE t.grant_id = ? AND t.kind = 'refresh' AND t.issued_at <= r.revoked_at)`;

/**
 * The prepared statements, with their positional parameters named in the types.
 * @see RFC 6749 §4.1.2 (single-use codes), RFC 7009 §2.1 (revocation).
 */
export interface SqliteStatements {
  readonly findClient: Statement<[clientId: string], ClientRow>;
  /** Insert only: `changes` is 0 when the id exists. */
  readonly insertClient: Statement<ClientRow>;
  /** One UPDATE of exactly the given columns; the others keep what the row holds at the write. */
  readonly updateClient: Statement<ClientChangesRow, ClientRow>;
  readonly listClients: Statement<[], ClientRow>;
  readonly deleteClient: Statement<[clientId: string]>;
  readonly deleteClientCodes: Statement<[clientId: string]>;
  readonly deleteClientConsents: Statement<[clientId: string]>;
  readonly insertCode: Statement<CodeRow>;
  /** The atomic consume: only the first of N racing calls matches `consumed_at IS NULL`. Raw: values by position. */
  readonly consumeCode: Statement<[consumedAt: number, codeHash: string, now: number], CodeRecordValues>;
  readonly findLiveCodeGrant: Statement<[codeHash: string, now: number], { grant_id: string; user_id: string; client_id: string }>;
  /** Positional (`tokenValues`): binding by name cost 2.5 µs more per token. */
  readonly insertToken: Statement<TokenValues>;
  /** Raw: values by position. Refuses a token under a revocation at or after its `issued_at`, deleted or not yet. */
  readonly findToken: Statement<[tokenHash: string, kind: string, now: number], TokenRecordValues>;
  readonly deleteAccessToken: Statement<[tokenHash: string]>;
  readonly deleteGrantTokens: Statement<[grantId: string]>;
  /** Only inside `deleteClient`, after the revocation's drain has emptied the integration (contract: revoke first). */
  readonly deleteClientTokens: Statement<[clientId: string]>;
  /**
   * 1 when a live tombstone (grant, integration or user at it, the latter two at or after authorizedAt) refuses the
   * token, or a revocation of the integration or user still draining holds a refresh token of the grant.
   */
  readonly isRefused: Statement<RefusalValues, number>;
  /** `isRefused`, or the integration is gone or its row no longer holds every value a copy of it holds. */
  readonly isRefusedAtRevision: Statement<RevisionRefusalValues, number>;
  readonly upsertRevokedGrant: Statement<[grantId: string, expiresAt: number]>;
  /** A live tombstone of the grant: a revocation of it is then not reported again (`revokeGrant` resolves false). */
  readonly isGrantRevoked: Statement<[grantId: string, now: number], number>;
  /** Keeps the latest revocation moment and the latest retention, and marks the tombstone draining (drain.ts). */
  readonly upsertRevokedClient: Statement<RevocationParams>;
  readonly upsertRevokedClientUser: Statement<UserRevocationParams>;
  readonly findConsent: Statement<[userId: string, clientId: string], ConsentRow>;
  readonly upsertConsent: Statement<ConsentRow>;
  readonly deleteConsent: Statement<[userId: string, clientId: string]>;
  readonly listConsents: Statement<[userId: string], ConsentRow>;
}

/**
 * Prepares every statement once, so a request costs no SQL parsing (DESIGN §3a: one round trip per step).
 * @see RFC 6749 §4.1.2 (single-use codes), RFC 7009 §2.1 (revocation).
 */
export function prepareSqliteStatements(db: SqliteConnection): SqliteStatements {
  return {
    findClient: db.prepare('SELECT * FROM clients WHERE client_id = ?'),
    insertClient: db.prepare(`
      INSERT INTO clients (client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes,
                           require_pkce, credentials_issued_at, created_at, disabled, token_endpoint_auth_method,
                           previous_client_secret_hash, previous_client_secret_expires_at)
      VALUES (@client_id, @client_secret_hash, @name, @flow, @redirect_uris, @allowed_scopes,
              @require_pkce, @credentials_issued_at, @created_at, @disabled, @token_endpoint_auth_method,
              @previous_client_secret_hash, @previous_client_secret_expires_at)
      ON CONFLICT (client_id) DO NOTHING`),
    // Every other column is NOT NULL, so a null parameter can only mean "not given"; the nullable one has
    // its own flag. One statement: SQLite runs it under the write lock, so a concurrent update of another
    // column is never overwritten.
    updateClient: db.prepare(`
      UPDATE clients SET
        client_secret_hash = coalesce(@client_secret_hash, client_secret_hash),
        name = coalesce(@name, name),
        redirect_uris = coalesce(@redirect_uris, redirect_uris),
        allowed_scopes = coalesce(@allowed_scopes, allowed_scopes),
        require_pkce = coalesce(@require_pkce, require_pkce),
        disabled = coalesce(@disabled, disabled),
        token_endpoint_auth_method = CASE WHEN @set_token_endpoint_auth_method = 1
          THEN @token_endpoint_auth_method ELSE token_endpoint_auth_method END,
        previous_client_secret_hash = CASE WHEN @set_previous_client_secret = 1
          THEN @previous_client_secret_hash ELSE previous_client_secret_hash END,
        previous_client_secret_expires_at = CASE WHEN @set_previous_client_secret = 1
          THEN @previous_client_secret_expires_at ELSE previous_client_secret_expires_at END
      WHERE client_id = @client_id
      RETURNING *`),
    listClients: db.prepare('SELECT * FROM clients ORDER BY created_at, client_id'),
    deleteClient: db.prepare('DELETE FROM clients WHERE client_id = ?'),
    deleteClientCodes: db.prepare('DELETE FROM codes WHERE client_id = ?'),
    deleteClientConsents: db.prepare('DELETE FROM consents WHERE client_id = ?'),
    insertCode: db.prepare(`
      INSERT INTO codes (code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge,
                         issuer, issued_at, expires_at, consumed_at)
      VALUES (@code_hash, @grant_id, @client_id, @user_id, @redirect_uri, @scope, @code_challenge,
              @issuer, @issued_at, @expires_at, @consumed_at)`),
    consumeCode: db.prepare<[number, string, number], CodeRecordValues>(`
      UPDATE codes SET consumed_at = ?
      WHERE code_hash = ? AND consumed_at IS NULL AND expires_at > ?
      RETURNING ${CODE_RECORD_COLUMNS}`).raw(),
    findLiveCodeGrant: db.prepare('SELECT grant_id, user_id, client_id FROM codes WHERE code_hash = ? AND expires_at > ?'),
    insertToken: db.prepare(`
      INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at, issued_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // A tombstone refuses whether or not it has expired: it is swept only once its drain has deleted every token it
    // refuses (sweeper.ts), so its going never revives one. Each is one search of a small WITHOUT ROWID table by key.
    // What it reads is what schema 9's triggers count for the bearer cache (schema.ts): read another table, count it there.
    findToken: db.prepare<[string, string, number], TokenRecordValues>(`
      SELECT ${TOKEN_RECORD_COLUMNS} FROM tokens t WHERE token_hash = ? AND kind = ? AND expires_at > ?
        AND NOT EXISTS (SELECT 1 FROM revoked_clients r WHERE r.client_id = t.client_id AND r.revoked_at >= t.issued_at)
        AND NOT EXISTS (SELECT 1 FROM revoked_client_users r
                        WHERE r.client_id = t.client_id AND r.user_id = t.user_id AND r.revoked_at >= t.issued_at)`).raw(),
    deleteAccessToken: db.prepare("DELETE FROM tokens WHERE token_hash = ? AND kind = 'access'"),
    deleteGrantTokens: db.prepare('DELETE FROM tokens WHERE grant_id = ?'),
    deleteClientTokens: db.prepare('DELETE FROM tokens WHERE client_id = ?'),
    // A null user_id (client_credentials) matches no user tombstone: `= NULL` is never true.
    isRefused: db.prepare<RefusalValues, number>(`
      SELECT EXISTS (SELECT 1 FROM revoked_grants WHERE grant_id = ? AND expires_at > ?)
          OR EXISTS (SELECT 1 FROM revoked_clients r WHERE client_id = ?
                       AND (revoked_at >= ? AND expires_at > ? OR draining = 1 AND ${REFRESH_TOKEN_UNDER_IT}))
          OR EXISTS (SELECT 1 FROM revoked_client_users r WHERE client_id = ? AND user_id = ?
                       AND (revoked_at >= ? AND expires_at > ? OR draining = 1 AND ${REFRESH_TOKEN_UNDER_IT}))`).pluck(),
    isRefusedAtRevision: db.prepare<RevisionRefusalValues, number>(`
      SELECT EXISTS (SELECT 1 FROM revoked_grants WHERE grant_id = ? AND expires_at > ?)
          OR EXISTS (SELECT 1 FROM revoked_clients r WHERE client_id = ?
                       AND (revoked_at >= ? AND expires_at > ? OR draining = 1 AND ${REFRESH_TOKEN_UNDER_IT}))
          OR EXISTS (SELECT 1 FROM revoked_client_users r WHERE client_id = ? AND user_id = ?
                       AND (revoked_at >= ? AND expires_at > ? OR draining = 1 AND ${REFRESH_TOKEN_UNDER_IT}))
          OR NOT EXISTS (SELECT 1 FROM clients WHERE client_id = ? AND client_secret_hash = ? AND name = ? AND flow = ?
                           AND redirect_uris = ? AND allowed_scopes = ? AND require_pkce = ? AND credentials_issued_at = ?
                           AND created_at = ? AND disabled = ? AND token_endpoint_auth_method IS ?
                           AND previous_client_secret_hash IS ? AND previous_client_secret_expires_at IS ?)`).pluck(),
    isGrantRevoked: db.prepare<[string, number], number>('SELECT 1 FROM revoked_grants WHERE grant_id = ? AND expires_at > ?').pluck(),
    upsertRevokedGrant: db.prepare(`
      INSERT INTO revoked_grants (grant_id, expires_at) VALUES (?, ?)
      ON CONFLICT (grant_id) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`),
    // max(): another process (the CLI) may have recorded a later moment; a revocation never moves back. Draining
    // until drain.ts has deleted every token at or before the moment, this call's and any other's.
    upsertRevokedClient: db.prepare(`
      INSERT INTO revoked_clients (client_id, revoked_at, expires_at, draining) VALUES (@client_id, @revoked_at, @expires_at, 1)
      ON CONFLICT (client_id) DO UPDATE SET
        revoked_at = max(revoked_at, excluded.revoked_at), expires_at = max(expires_at, excluded.expires_at), draining = 1`),
    upsertRevokedClientUser: db.prepare(`
      INSERT INTO revoked_client_users (client_id, user_id, revoked_at, expires_at, draining)
      VALUES (@client_id, @user_id, @revoked_at, @expires_at, 1)
      ON CONFLICT (client_id, user_id) DO UPDATE SET
        revoked_at = max(revoked_at, excluded.revoked_at), expires_at = max(expires_at, excluded.expires_at), draining = 1`),
    findConsent: db.prepare('SELECT * FROM consents WHERE user_id = ? AND client_id = ?'),
    upsertConsent: db.prepare(`
      INSERT INTO consents (user_id, client_id, scope, granted_at)
      VALUES (@user_id, @client_id, @scope, @granted_at)
      ON CONFLICT (user_id, client_id) DO UPDATE SET
        scope = excluded.scope, granted_at = excluded.granted_at`),
    deleteConsent: db.prepare('DELETE FROM consents WHERE user_id = ? AND client_id = ?'),
    listConsents: db.prepare('SELECT * FROM consents WHERE user_id = ? ORDER BY granted_at, client_id'),
  };
}
