// PostgreSQL clients, codes and consents: row mapping and the statements behind each contract method.
import type {
  AuthorizationCodeRecord,
  ClientStore,
  CodeStore,
  ConsentRecord,
  ConsentStore,
  ConsumeResult,
  OAuthClient,
} from '../contract.js';
import type { PostgresTables } from './schema.js';
import { prepareSql, type PostgresRunner } from './query.js';

interface ClientRow {
  client_id: string;
  client_secret_hash: string;
  name: string;
  flow: OAuthClient['flow'];
  redirect_uris: string[];
  allowed_scopes: string[];
  require_pkce: boolean;
  credentials_issued_at: Date;
  created_at: Date;
  disabled: boolean;
}

const CLIENT_COLUMNS =
  'client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes, require_pkce, credentials_issued_at, created_at, disabled';

function toClient(row: ClientRow): OAuthClient {
  return {
    clientId: row.client_id,
    clientSecretHash: row.client_secret_hash,
    name: row.name,
    flow: row.flow,
    redirectUris: row.redirect_uris,
    allowedScopes: row.allowed_scopes,
    requirePkce: row.require_pkce,
    credentialsIssuedAt: row.credentials_issued_at,
    createdAt: row.created_at,
    disabled: row.disabled,
  };
}

/** ClientStore on PostgreSQL: upsert by client_id; list ordered by created_at then client_id (byte order). */
export function createPostgresClientStore(db: PostgresRunner, t: PostgresTables): ClientStore {
  const find = prepareSql(`SELECT ${CLIENT_COLUMNS} FROM ${t.clients} WHERE client_id = $1`);
  const save = prepareSql(
    `INSERT INTO ${t.clients} (${CLIENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (client_id) DO UPDATE SET client_secret_hash = EXCLUDED.client_secret_hash,
       name = EXCLUDED.name, flow = EXCLUDED.flow, redirect_uris = EXCLUDED.redirect_uris,
       allowed_scopes = EXCLUDED.allowed_scopes, require_pkce = EXCLUDED.require_pkce,
       credentials_issued_at = EXCLUDED.credentials_issued_at, created_at = EXCLUDED.created_at,
       disabled = EXCLUDED.disabled`,
  );
  // COLLATE "C": code-point order, the same order JavaScript's sort gives, whatever the database locale.
  const list = prepareSql(`SELECT ${CLIENT_COLUMNS} FROM ${t.clients} ORDER BY created_at, client_id COLLATE "C"`);
  return {
    async findClient(clientId) {
      const { rows } = await db.query<ClientRow>(find, [clientId]);
      return rows[0] ? toClient(rows[0]) : null;
    },
    async saveClient(c) {
      await db.query(save, [
        c.clientId,
        c.clientSecretHash,
        c.name,
        c.flow,
        [...c.redirectUris],
        [...c.allowedScopes],
        c.requirePkce,
        c.credentialsIssuedAt,
        c.createdAt,
        c.disabled,
      ]);
    },
    async listClients() {
      const { rows } = await db.query<ClientRow>(list, []);
      return rows.map(toClient);
    },
  };
}

interface CodeRow {
  outcome: 'consumed' | 'replayed';
  code_hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scope: string[];
  code_challenge: string | null;
  issuer: string;
  expires_at: Date;
}

const CODE_COLUMNS = 'code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge, issuer, expires_at';

/**
 * CodeStore on PostgreSQL. consumeCode is one statement: the UPDATE … WHERE consumed_at IS NULL takes the
 * row lock, so of N concurrent calls exactly one updates the row; the others wait for it, re-check the
 * WHERE clause on the new row version, update nothing, and the second branch (which reads the
 * statement's snapshot) reports them as replays. One round trip, no check-then-act.
 * @see RFC 6749 §4.1.2 ("The client MUST NOT use the authorization code more than once").
 */
export function createPostgresCodeStore(db: PostgresRunner, t: PostgresTables): CodeStore {
  const save = prepareSql(`INSERT INTO ${t.codes} (${CODE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`);
  const consume = prepareSql(
    `WITH won AS (
       UPDATE ${t.codes} SET consumed_at = $2
       WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > $2
       RETURNING ${CODE_COLUMNS})
     SELECT 'consumed' AS outcome, ${CODE_COLUMNS} FROM won
     UNION ALL
     SELECT 'replayed' AS outcome, ${CODE_COLUMNS} FROM ${t.codes}
     WHERE code_hash = $1 AND expires_at > $2 AND NOT EXISTS (SELECT 1 FROM won)`,
  );
  return {
    async saveCode(r) {
      await db.query(save, [
        r.codeHash,
        r.grantId,
        r.clientId,
        r.userId,
        r.redirectUri,
        [...r.scope],
        r.codeChallenge,
        r.issuer,
        r.expiresAt,
      ]);
    },
    async consumeCode(codeHash): Promise<ConsumeResult<AuthorizationCodeRecord>> {
      const { rows } = await db.query<CodeRow>(consume, [codeHash, new Date()]);
      const row = rows[0];
      if (!row) return { kind: 'not_found' };
      if (row.outcome === 'replayed') return { kind: 'replayed', grantId: row.grant_id };
      return {
        kind: 'consumed',
        record: {
          codeHash: row.code_hash,
          grantId: row.grant_id,
          clientId: row.client_id,
          userId: row.user_id,
          redirectUri: row.redirect_uri,
          scope: row.scope,
          codeChallenge: row.code_challenge,
          issuer: row.issuer,
          expiresAt: row.expires_at,
        },
      };
    },
  };
}

interface ConsentRow {
  user_id: string;
  client_id: string;
  scope: string[];
  granted_at: Date;
}

function toConsent(row: ConsentRow): ConsentRecord {
  return { userId: row.user_id, clientId: row.client_id, scope: row.scope, grantedAt: row.granted_at };
}

/** ConsentStore on PostgreSQL: upsert by (user_id, client_id). */
export function createPostgresConsentStore(db: PostgresRunner, t: PostgresTables): ConsentStore {
  const columns = 'user_id, client_id, scope, granted_at';
  const find = prepareSql(`SELECT ${columns} FROM ${t.consents} WHERE user_id = $1 AND client_id = $2`);
  const save = prepareSql(
    `INSERT INTO ${t.consents} (${columns}) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id, client_id) DO UPDATE SET scope = EXCLUDED.scope, granted_at = EXCLUDED.granted_at`,
  );
  const revoke = prepareSql(`DELETE FROM ${t.consents} WHERE user_id = $1 AND client_id = $2`);
  const list = prepareSql(
    `SELECT ${columns} FROM ${t.consents} WHERE user_id = $1 ORDER BY granted_at, client_id COLLATE "C"`,
  );
  return {
    async findConsent(userId, clientId) {
      const { rows } = await db.query<ConsentRow>(find, [userId, clientId]);
      return rows[0] ? toConsent(rows[0]) : null;
    },
    async saveConsent(r) {
      await db.query(save, [r.userId, r.clientId, [...r.scope], r.grantedAt]);
    },
    async revokeConsent(userId, clientId) {
      await db.query(revoke, [userId, clientId]);
    },
    async listConsents(userId) {
      const { rows } = await db.query<ConsentRow>(list, [userId]);
      return rows.map(toConsent);
    },
  };
}
