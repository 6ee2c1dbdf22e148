// The example MariaDB store's integrations: insert-only create, and updates that write only the fields given.
import type { ClientChanges, ClientStore, OAuthClient, TokenEndpointAuthMethod } from 'express-oauth-router';
import { decodeBoolean, decodeList, encodeList, isDuplicateKey } from './codec.js';
import type { MariaDb } from './db.js';
import type { MariaDbTables } from './schema.js';

interface ClientRow {
  client_id: string;
  client_secret_hash: string;
  name: string;
  flow: OAuthClient['flow'];
  redirect_uris: string;
  allowed_scopes: string;
  require_pkce: number;
  credentials_issued_at: Date;
  created_at: Date;
  disabled: number;
  token_endpoint_auth_method: TokenEndpointAuthMethod | null;
  previous_client_secret_hash: string | null;
  previous_client_secret_expires_at: Date | null;
}

const COLUMNS = `client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes, require_pkce,
  credentials_issued_at, created_at, disabled, token_endpoint_auth_method, previous_client_secret_hash,
  previous_client_secret_expires_at`;

function toClient(row: ClientRow): OAuthClient {
  return {
    clientId: row.client_id,
    clientSecretHash: row.client_secret_hash,
    name: row.name,
    flow: row.flow,
    redirectUris: decodeList(row.redirect_uris),
    allowedScopes: decodeList(row.allowed_scopes),
    requirePkce: decodeBoolean(row.require_pkce),
    credentialsIssuedAt: row.credentials_issued_at,
    createdAt: row.created_at,
    disabled: decodeBoolean(row.disabled),
    // NULL (no restriction) reads as an absent property, never as null: the contract keeps absence as absence.
    ...(row.token_endpoint_auth_method === null ? {} : { tokenEndpointAuthMethod: row.token_endpoint_auth_method }),
    // The previous secret of a rotation's grace period: both columns, or neither (absent, never null).
    ...(row.previous_client_secret_hash === null || row.previous_client_secret_expires_at === null
      ? {}
      : {
          previousClientSecretHash: row.previous_client_secret_hash,
          previousClientSecretExpiresAt: row.previous_client_secret_expires_at,
        }),
  };
}

/**
 * Each changeable field, its column and how it is written. A field that is not given is not written; a
 * `tokenEndpointAuthMethod` of `null` is written as NULL, lifting the restriction.
 */
const CHANGES: readonly [keyof ClientChanges, string, (value: never) => unknown][] = [
  ['clientSecretHash', 'client_secret_hash', (v: string) => v],
  ['name', 'name', (v: string) => v],
  ['redirectUris', 'redirect_uris', (v: readonly string[]) => encodeList(v)],
  ['allowedScopes', 'allowed_scopes', (v: readonly string[]) => encodeList(v)],
  ['requirePkce', 'require_pkce', (v: boolean) => v],
  ['disabled', 'disabled', (v: boolean) => v],
  ['tokenEndpointAuthMethod', 'token_endpoint_auth_method', (v: TokenEndpointAuthMethod | null) => v],
  ['previousClientSecretHash', 'previous_client_secret_hash', (v: string | null) => v],
  ['previousClientSecretExpiresAt', 'previous_client_secret_expires_at', (v: Date | null) => v],
];

/**
 * ClientStore on MariaDB, without the optional `disableClient` and `enableClient` (the admin API then reads the flag before writing it). `updateClient` is one UPDATE that sets only the columns of the fields given, so a
 * disable and a concurrent secret rotation each write their own column and both survive (never a
 * read-modify-write of the whole record); the record is then read back under the UPDATE's row lock.
 * `deleteClient` (optional in the contract) removes the row, its codes, consents and tokens in one transaction.
 * @see RFC 6749 §2 (client registration), §2.3.1 (client password).
 */
export function createMariaDbClientStore(db: MariaDb, t: MariaDbTables): Required<Omit<ClientStore, 'disableClient' | 'enableClient'>> {
  const select = `SELECT ${COLUMNS} FROM ${t.clients} WHERE client_id = ?`;
  return {
    async findClient(clientId) {
      const [row] = await db.rows<ClientRow>(select, [clientId]);
      return row ? toClient(row) : null;
    },
    async createClient(c) {
      try {
        await db.run(`INSERT INTO ${t.clients} (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
          c.clientId, c.clientSecretHash, c.name, c.flow, encodeList(c.redirectUris), encodeList(c.allowedScopes),
          c.requirePkce, c.credentialsIssuedAt, c.createdAt, c.disabled, c.tokenEndpointAuthMethod ?? null,
          c.previousClientSecretHash ?? null, c.previousClientSecretExpiresAt ?? null,
        ]);
        return true;
      } catch (err) {
        // Insert only: an existing id (exactly equal, by the binary collation) is left as it is.
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async updateClient(clientId, changes) {
      const given = CHANGES.filter(([field]) => changes[field] !== undefined);
      const sets = given.map(([, column]) => `${column} = ?`);
      const values = given.map(([field, , encode]) => encode(changes[field] as never));
      return db.transaction(async (tx) => {
        if (sets.length > 0) {
          // affectedRows counts matched rows (mysql2 sets CLIENT_FOUND_ROWS): 0 means an unknown id.
          const { affectedRows } = await tx.run(`UPDATE ${t.clients} SET ${sets.join(', ')} WHERE client_id = ?`, [
            ...values, clientId,
          ]);
          if (affectedRows === 0) return null;
        }
        const [row] = await tx.rows<ClientRow>(select, [clientId]);
        return row ? toClient(row) : null;
      });
    },
    async listClients() {
      const rows = await db.rows<ClientRow>(`SELECT ${COLUMNS} FROM ${t.clients} ORDER BY created_at, client_id`);
      return rows.map(toClient);
    },
    async deleteClient(clientId) {
      // One transaction: the row, and with it the integration's codes, consents and tokens. The caller
      // revoked its tokens first (a tombstone), so nothing saved later revives under a re-created id.
      return db.transaction(async (tx) => {
        const { affectedRows } = await tx.run(`DELETE FROM ${t.clients} WHERE client_id = ?`, [clientId]);
        if (affectedRows === 0) return false;
        for (const table of [t.codes, t.consents, t.tokens]) await tx.run(`DELETE FROM ${table} WHERE client_id = ?`, [clientId]);
        return true;
      });
    },
  };
}
