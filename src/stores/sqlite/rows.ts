// Row shapes of the SQLite store and their mapping to and from the contract's records.
import type {
  AuthorizationCodeRecord,
  ClientChanges,
  ClientFlow,
  ConsentRecord,
  OAuthClient,
  TokenEndpointAuthMethod,
  TokenRecord,
} from '../contract.js';
import { definedClientChanges } from '../store-policy.js';

/**
 * `clients` row: booleans as 0/1 (better-sqlite3 binds no booleans), dates as ms, arrays as JSON.
 * @see RFC 6749 §2 (client registration), §2.3.1 (only the secret's hash is kept).
 */
export interface ClientRow {
  readonly client_id: string;
  readonly client_secret_hash: string;
  readonly name: string;
  readonly flow: string;
  readonly redirect_uris: string;
  readonly allowed_scopes: string;
  readonly require_pkce: number;
  readonly credentials_issued_at: number;
  readonly created_at: number;
  readonly disabled: number;
  /** NULL: any method the server allows (schema version 4). */
  readonly token_endpoint_auth_method: string | null;
  /** Both NULL: no previous secret in its grace period (schema version 6). */
  readonly previous_client_secret_hash: string | null;
  readonly previous_client_secret_expires_at: number | null;
}

/**
 * The parameters of the one `UPDATE clients` of `updateClient`: `null` leaves a column as it is, so the
 * statement writes exactly the fields given and reads the others inside the write itself. The one nullable
 * column, `token_endpoint_auth_method`, has a flag instead: 1 writes the value given, NULL included.
 * @see RFC 6749 §2 (client registration), RFC 7591 §2.
 */
export interface ClientChangesRow {
  readonly client_id: string;
  readonly client_secret_hash: string | null;
  readonly name: string | null;
  readonly redirect_uris: string | null;
  readonly allowed_scopes: string | null;
  readonly require_pkce: number | null;
  readonly disabled: number | null;
  readonly set_token_endpoint_auth_method: number;
  readonly token_endpoint_auth_method: string | null;
  /** 1 writes both previous-secret columns as given, NULL included. */
  readonly set_previous_client_secret: number;
  readonly previous_client_secret_hash: string | null;
  readonly previous_client_secret_expires_at: number | null;
}

/** `codes` row; `consumed_at` is null until the code is redeemed. @see RFC 6749 §4.1.2 (single use). */
export interface CodeRow {
  readonly code_hash: string;
  readonly grant_id: string;
  readonly client_id: string;
  readonly user_id: string;
  readonly redirect_uri: string;
  readonly scope: string;
  readonly code_challenge: string | null;
  readonly issuer: string;
  readonly issued_at: number;
  readonly expires_at: number;
  readonly consumed_at: number | null;
}

/** `consents` row. @see RFC 6749 §4.1.1 (the resource owner's approval). */
export interface ConsentRow {
  readonly user_id: string;
  readonly client_id: string;
  readonly scope: string;
  readonly granted_at: number;
}

function toStringArray(json: string): readonly string[] {
  return JSON.parse(json) as string[];
}

/** Maps an integration to its row. @see RFC 6749 §2 (client registration). */
export function clientToRow(client: OAuthClient): ClientRow {
  return {
    client_id: client.clientId,
    client_secret_hash: client.clientSecretHash,
    name: client.name,
    flow: client.flow,
    redirect_uris: JSON.stringify(client.redirectUris),
    allowed_scopes: JSON.stringify(client.allowedScopes),
    require_pkce: client.requirePkce ? 1 : 0,
    credentials_issued_at: client.credentialsIssuedAt.getTime(),
    created_at: client.createdAt.getTime(),
    disabled: client.disabled ? 1 : 0,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? null,
    previous_client_secret_hash: client.previousClientSecretHash ?? null,
    previous_client_secret_expires_at: client.previousClientSecretExpiresAt?.getTime() ?? null,
  };
}

/** Maps a row back to an integration. @see RFC 6749 §2 (client registration). */
export function rowToClient(row: ClientRow): OAuthClient {
  return {
    clientId: row.client_id,
    clientSecretHash: row.client_secret_hash,
    name: row.name,
    flow: row.flow as ClientFlow,
    redirectUris: toStringArray(row.redirect_uris),
    allowedScopes: toStringArray(row.allowed_scopes),
    requirePkce: row.require_pkce === 1,
    credentialsIssuedAt: new Date(row.credentials_issued_at),
    createdAt: new Date(row.created_at),
    disabled: row.disabled === 1,
    // Absent, not null, when unrestricted: the contract keeps absence as absence.
    ...(row.token_endpoint_auth_method === null
      ? {}
      : { tokenEndpointAuthMethod: row.token_endpoint_auth_method as TokenEndpointAuthMethod }),
    ...(row.previous_client_secret_hash === null || row.previous_client_secret_expires_at === null
      ? {}
      : {
          previousClientSecretHash: row.previous_client_secret_hash,
          previousClientSecretExpiresAt: new Date(row.previous_client_secret_expires_at),
        }),
  };
}

/** Maps the fields `updateClient` was given to its statement's parameters. @see RFC 6749 §2. */
export function clientChangesToRow(clientId: string, changes: ClientChanges): ClientChangesRow {
  const given = definedClientChanges(changes);
  const flag = (value: boolean | undefined): number | null => (value === undefined ? null : value ? 1 : 0);
  const json = (value: readonly string[] | undefined): string | null => (value === undefined ? null : JSON.stringify(value));
  return {
    client_id: clientId,
    client_secret_hash: given.clientSecretHash ?? null,
    name: given.name ?? null,
    redirect_uris: json(given.redirectUris),
    allowed_scopes: json(given.allowedScopes),
    require_pkce: flag(given.requirePkce),
    disabled: flag(given.disabled),
    set_token_endpoint_auth_method: given.tokenEndpointAuthMethod === undefined ? 0 : 1,
    token_endpoint_auth_method: given.tokenEndpointAuthMethod ?? null,
    set_previous_client_secret:
      given.previousClientSecretHash === undefined && given.previousClientSecretExpiresAt === undefined ? 0 : 1,
    previous_client_secret_hash: given.previousClientSecretHash ?? null,
    previous_client_secret_expires_at: given.previousClientSecretExpiresAt?.getTime() ?? null,
  };
}

/** Maps a fresh authorization code to its row. @see RFC 6749 §4.1.2. */
export function codeToRow(code: AuthorizationCodeRecord): CodeRow {
  return {
    code_hash: code.codeHash,
    grant_id: code.grantId,
    client_id: code.clientId,
    user_id: code.userId,
    redirect_uri: code.redirectUri,
    scope: JSON.stringify(code.scope),
    code_challenge: code.codeChallenge,
    issuer: code.issuer,
    issued_at: code.issuedAt.getTime(),
    expires_at: code.expiresAt.getTime(),
    consumed_at: null,
  };
}

/**
 * The columns `consumeCode` returns, in the order of `CodeRecordValues`. The hot reads (a code's consume, a
 * token's lookup) take their row as an array (better-sqlite3's raw mode): an object row costs a property
 * name made and set through V8's API per column, about 1–2 µs a row (BENCHMARKS.md, tenth pass). The order
 * is the statement's own list, never `*`, so a column that a migration adds cannot shift it.
 */
export const CODE_RECORD_COLUMNS = 'grant_id, client_id, user_id, redirect_uri, scope, code_challenge, issuer, issued_at, expires_at';

/**
 * A consumed code's values, in the order of `CODE_RECORD_COLUMNS`; not its hash, which the caller looked it up by
 * and SQLite compared exactly (BINARY collation). @see RFC 6749 §4.1.2.
 */
export type CodeRecordValues = [
  grantId: string, clientId: string, userId: string, redirectUri: string, scope: string,
  codeChallenge: string | null, issuer: string, issuedAt: number, expiresAt: number,
];

/** Maps a consumed code's values, found by `codeHash`, back to an authorization code. @see RFC 6749 §4.1.2. */
export function valuesToCode(codeHash: string, values: CodeRecordValues): AuthorizationCodeRecord {
  const [grantId, clientId, userId, redirectUri, scope, codeChallenge, issuer, issuedAt, expiresAt] = values;
  return {
    codeHash, grantId, clientId, userId, redirectUri, scope: toStringArray(scope), codeChallenge, issuer,
    issuedAt: new Date(issuedAt), expiresAt: new Date(expiresAt),
  };
}

/** A `tokens` row's values in the column order of the store's insert. @see RFC 6749 §1.4, §1.5. */
export type TokenValues = [
  tokenHash: string, kind: 'access' | 'refresh', grantId: string, clientId: string, userId: string | null,
  scope: string, issuer: string, expiresAt: number, issuedAt: number,
];

/**
 * Maps an access or refresh token to the values of its row, for the store's positional insert. `issuedAt` is the
 * save's `authorizedAt` (ms): a revocation refuses the token when its moment is at or after it (schema.ts, 8).
 * @see RFC 6749 §1.4, §1.5, RFC 7009 §2.1.
 */
export function tokenValues(kind: 'access' | 'refresh', token: TokenRecord, issuedAt: number): TokenValues {
  return [
    token.tokenHash, kind, token.grantId, token.clientId, token.userId, JSON.stringify(token.scope), token.issuer,
    token.expiresAt.getTime(), issuedAt,
  ];
}

/**
 * The columns `findToken` returns, in the order of `TokenRecordValues` (see `CODE_RECORD_COLUMNS` for why); not
 * the hash, which the caller looked the token up by.
 */
export const TOKEN_RECORD_COLUMNS = 'grant_id, client_id, user_id, scope, issuer, expires_at';

/** A found token's values, in the order of `TOKEN_RECORD_COLUMNS`. @see RFC 6749 §1.4, §1.5. */
export type TokenRecordValues = [
  grantId: string, clientId: string, userId: string | null, scope: string, issuer: string, expiresAt: number,
];

/** Maps the values of the token found by `tokenHash` back to a token. @see RFC 6749 §1.4, §1.5. */
export function valuesToToken(tokenHash: string, values: TokenRecordValues): TokenRecord {
  const [grantId, clientId, userId, scope, issuer, expiresAt] = values;
  return { tokenHash, grantId, clientId, userId, scope: toStringArray(scope), issuer, expiresAt: new Date(expiresAt) };
}

/** Maps a consent to its row. @see RFC 6749 §4.1.1 (the user grants or denies access). */
export function consentToRow(consent: ConsentRecord): ConsentRow {
  return {
    user_id: consent.userId,
    client_id: consent.clientId,
    scope: JSON.stringify(consent.scope),
    granted_at: consent.grantedAt.getTime(),
  };
}

/** Maps a row back to a consent. @see RFC 6749 §4.1.1. */
export function rowToConsent(row: ConsentRow): ConsentRecord {
  return {
    userId: row.user_id,
    clientId: row.client_id,
    scope: toStringArray(row.scope),
    grantedAt: new Date(row.granted_at),
  };
}
