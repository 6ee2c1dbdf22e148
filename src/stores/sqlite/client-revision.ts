// The SQLite store's integration revisions: the row's own values, which a save compares with the row as stored.
import type { ClientRow } from './rows.js';

/** Every column of a `clients` row, in the order `isRefusedAtRevision` compares them. */
export type ClientRowValues = [
  clientId: string, clientSecretHash: string, name: string, flow: string, redirectUris: string, allowedScopes: string,
  requirePkce: number, credentialsIssuedAt: number, createdAt: number, disabled: number,
  tokenEndpointAuthMethod: string | null, previousClientSecretHash: string | null, previousClientSecretExpiresAt: number | null,
];

const LENGTH = 13;

/**
 * The revision of a row read by `findClient`: its values, as JSON. A save served from the copy is refused unless the
 * row is still there with exactly these values, so nothing another writer does can make a stale copy pass: not a
 * trigger it dropped (a table rebuilt by hand), not a counter it set back (an older file restored), not a value it
 * wrote over a version column (an ORM's optimistic lock). A row written again with the same values has the same
 * revision, which the contract allows: it is what the copy holds.
 * @see RFC 6749 §2.3.1 (a changed secret counts at once).
 */
export function clientRevisionOf(row: ClientRow): string {
  const values: ClientRowValues = [
    row.client_id, row.client_secret_hash, row.name, row.flow, row.redirect_uris, row.allowed_scopes, row.require_pkce,
    row.credentials_issued_at, row.created_at, row.disabled, row.token_endpoint_auth_method, row.previous_client_secret_hash,
    row.previous_client_secret_expires_at,
  ];
  return JSON.stringify(values);
}

let lastRevision = '';
let lastValues: ClientRowValues | null = null;

/**
 * The row values a revision names, or null for a string this store never gave (the save is then refused, as for a
 * stale copy). The last one read is kept: a busy integration's saves all carry the same revision.
 */
export function clientRowValuesOf(revision: string): ClientRowValues | null {
  if (revision === lastRevision) return lastValues;
  let parsed: unknown;
  try {
    parsed = JSON.parse(revision);
  } catch {
    return null;
  }
  const valid = Array.isArray(parsed) && parsed.length === LENGTH
    && parsed.every((value) => value === null || typeof value === 'string' || Number.isSafeInteger(value));
  lastRevision = revision;
  lastValues = valid ? (parsed as ClientRowValues) : null;
  return lastValues;
}
