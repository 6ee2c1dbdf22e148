// Reads one row of an import file (snake_case wire fields) into a registration input and its secret.
import type { ClientFlow, TokenEndpointAuthMethod } from '../stores/contract.js';
import type { RegisterClientInput } from './register-client.js';
import { secretHashFormat } from '../crypto/secret-hash-format.js';

/** The fields an import row may carry; any other name is refused (a typo must not be ignored silently). */
export const IMPORT_FIELDS = [
  'client_id', 'client_secret', 'client_secret_hash', 'name', 'flow', 'redirect_uris', 'scopes', 'require_pkce',
  'token_endpoint_auth_method', 'credentials_issued_at',
] as const;

/** An import row as parsed from the file: wire names, JSON types (CSV cells already converted). */
export type ImportFields = Readonly<Record<string, unknown>>;

/** The secret of a row: the plaintext (hashed with scrypt on the way in) or an already-made hash. */
export type ImportedSecret =
  | { readonly kind: 'plaintext'; readonly value: string }
  | { readonly kind: 'hash'; readonly value: string };

/** A row read into what `registerClient` takes, with the secret apart. */
export interface ImportedClient {
  readonly input: RegisterClientInput & { readonly clientId: string; readonly credentialsIssuedAt: Date };
  readonly secret: ImportedSecret;
}

/** Longest plaintext secret accepted: bounds the work of hashing it. */
const MAX_SECRET_LENGTH = 1024;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

function text(fields: ImportFields, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string`);
  return value;
}

function list(fields: ImportFields, name: string): string[] | undefined {
  const value = fields[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new TypeError(`${name} must be a list of strings`);
  }
  return value as string[];
}

/**
 * The original issue date: `YYYY-MM-DD` (UTC midnight) or an ISO 8601 date-time with `Z` or an offset.
 * A date-time without a zone is refused: read in the importing machine's zone, it could move an integration
 * across the legacy cutoff (SPEC §9).
 */
export function parseImportDate(value: string): Date {
  const day = DATE.exec(value)?.[0] ?? DATE_TIME.exec(value)?.[1];
  const date = day === undefined ? null : new Date(value.length === 10 ? `${value}T00:00:00Z` : value);
  // Date rolls 2020-02-30 over to March 1st; the round trip of the day catches that.
  if (!date || Number.isNaN(date.getTime()) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
    throw new TypeError(
      'credentials_issued_at must be an ISO 8601 date (YYYY-MM-DD, read as UTC) or date-time with Z or an offset',
    );
  }
  return date;
}

/**
 * Reads one row: types and presence only. The rules of registration (name, flow, redirect URIs, scopes,
 * dates) are checked by the same code as `registerClient`, not here.
 * - `client_id`, `name`, `flow` and `credentials_issued_at` are required: a missing issue date would
 *   silently move a pre-2021 integration to the main address (SPEC §9), a missing flow could grant a
 *   code-flow integration the client_credentials grant.
 * - exactly one of `client_secret` (plaintext) and `client_secret_hash` (a format `secretHashFormat` reads).
 * @throws TypeError naming the first problem.
 * @see RFC 6749 §2 (client registration), RFC 7591 §2 (field names), SPEC §9.
 */
export function readImportRow(fields: ImportFields): ImportedClient {
  const unknown = Object.keys(fields).filter((name) => !(IMPORT_FIELDS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new TypeError(`unknown field ${unknown.map((n) => JSON.stringify(n)).join(', ')}`);
  const clientId = text(fields, 'client_id');
  if (clientId === undefined || clientId === '') throw new TypeError('client_id is required');
  const name = text(fields, 'name');
  if (name === undefined) throw new TypeError('name is required');
  const flow = text(fields, 'flow');
  if (flow === undefined) throw new TypeError('flow is required (authorization_code or client_credentials)');
  const issuedAt = text(fields, 'credentials_issued_at');
  if (issuedAt === undefined) {
    throw new TypeError('credentials_issued_at (the original issue date) is required: it decides the base address (SPEC §9)');
  }
  const plaintext = text(fields, 'client_secret');
  const hash = text(fields, 'client_secret_hash');
  if ((plaintext === undefined) === (hash === undefined)) {
    throw new TypeError('give exactly one of client_secret and client_secret_hash');
  }
  let secret: ImportedSecret;
  if (plaintext !== undefined) {
    if (plaintext.length === 0 || plaintext.length > MAX_SECRET_LENGTH) {
      throw new TypeError(`client_secret must be 1–${MAX_SECRET_LENGTH} characters`);
    }
    secret = { kind: 'plaintext', value: plaintext };
  } else {
    if (secretHashFormat(hash!) === null) {
      throw new TypeError('client_secret_hash has an unknown format: give a base64url SHA-256 (43 characters), $scrypt$ln=…,r=…,p=…$salt$hash or bcrypt ($2a$/$2b$/$2y$, cost 4–12)');
    }
    secret = { kind: 'hash', value: hash! };
  }
  const requirePkce = fields['require_pkce'];
  if (requirePkce !== undefined && requirePkce !== null && typeof requirePkce !== 'boolean') {
    throw new TypeError('require_pkce must be true or false');
  }
  const authMethod = text(fields, 'token_endpoint_auth_method');
  const redirectUris = list(fields, 'redirect_uris');
  const allowedScopes = list(fields, 'scopes');
  return {
    input: {
      clientId,
      name,
      flow: flow as ClientFlow,
      credentialsIssuedAt: parseImportDate(issuedAt),
      ...(redirectUris ? { redirectUris } : {}),
      ...(allowedScopes ? { allowedScopes } : {}),
      ...(typeof requirePkce === 'boolean' ? { requirePkce } : {}),
      ...(authMethod === undefined ? {} : { tokenEndpointAuthMethod: authMethod as TokenEndpointAuthMethod }),
    },
    secret,
  };
}
