// Imports existing integrations (ids, secrets or their hashes, original issue dates) into a store, idempotently.
import type { OAuthClient, Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { constantEquals } from '../crypto/constant-equals.js';
import { hashSecretScrypt } from '../crypto/scrypt-secret.js';
import { verifyClientSecret } from '../crypto/verify-client-secret.js';
import { buildClientRecord } from './register-client.js';
import { readImportRow, type ImportedSecret, type ImportFields } from './import-row.js';
import type { ImportRecord } from './import-file.js';
import { CLIENT_AUTH_METHODS } from '../checks/client-auth-methods.js';

/** What happened to a row. `would_create`: valid and new, but not written (a dry run or a refused file). */
export type ImportOutcome = 'created' | 'would_create' | 'unchanged' | 'conflict' | 'invalid';

/** The outcome of one row; `clientId` is `null` when the row names none readable. */
export interface ImportRowResult {
  readonly line: number;
  readonly clientId: string | null;
  readonly outcome: ImportOutcome;
  /** Why a row is invalid or in conflict. Never contains a secret or a hash. */
  readonly message?: string;
  /**
   * What is imported as it is but should not stay so: a plaintext secret shorter than `WEAK_SECRET_LENGTH`, which
   * the router's own secrets (43 characters, 256 bits) never are. Never contains a secret.
   */
  readonly warning?: string;
}

/**
 * Plaintext secrets shorter than this are imported (an integration keeps working across the move) with a warning:
 * a short secret can be guessed online despite the rate limit (RFC 6819 §5.1.4.2.2: secrets with enough entropy).
 */
export const WEAK_SECRET_LENGTH = 16;

/** How `importClients` treats bad rows and whether it writes. */
export interface ImportClientsOptions {
  /** Import the valid rows even when others are invalid or in conflict (default: refuse the whole file). */
  readonly skipInvalid?: boolean;
  /** Check everything, write nothing. */
  readonly dryRun?: boolean;
  /** The server's scope vocabulary: a row with a scope outside it is `invalid` (`RegistrationOptions.scopes`). */
  readonly scopes?: readonly string[];
}

/** The result of an import: one entry per row, in file order. */
export interface ImportReport {
  readonly rows: readonly ImportRowResult[];
  /** True when bad rows made the whole file refused: nothing was written. */
  readonly refused: boolean;
  readonly dryRun: boolean;
}

interface Planned {
  readonly index: number;
  readonly record: OAuthClient;
  readonly secret: ImportedSecret;
}

/** scrypt hashes running at once (each 32 MiB and ~67 ms of one core): enough to use two cores, no more. */
const HASH_CONCURRENCY = 2;
/** Stands in for a plaintext secret's hash while rows are validated: scrypt runs only once the file is accepted. */
const PLACEHOLDER_HASH = hashSecret('express-oauth-router: import placeholder');

function sameList(a: readonly string[], b: readonly string[]): boolean {
  const left = [...a].sort();
  const right = [...b].sort();
  return left.length === right.length && left.every((item, i) => item === right[i]);
}

/** The fields of `existing` that differ from the row; the secret is compared by checking it, never shown. */
async function differences(existing: OAuthClient, wanted: OAuthClient, secret: ImportedSecret): Promise<string[]> {
  const fields: string[] = [];
  if (existing.name !== wanted.name) fields.push('name');
  if (existing.flow !== wanted.flow) fields.push('flow');
  if (!sameList(existing.redirectUris, wanted.redirectUris)) fields.push('redirect_uris');
  if (!sameList(existing.allowedScopes, wanted.allowedScopes)) fields.push('scopes');
  if (existing.requirePkce !== wanted.requirePkce) fields.push('require_pkce');
  if ((existing.tokenEndpointAuthMethod ?? null) !== (wanted.tokenEndpointAuthMethod ?? null)) fields.push('token_endpoint_auth_method');
  if (existing.credentialsIssuedAt.getTime() !== wanted.credentialsIssuedAt.getTime()) fields.push('credentials_issued_at');
  const sameSecret = secret.kind === 'hash'
    ? constantEquals(existing.clientSecretHash, secret.value)
    : await verifyClientSecret(existing.clientSecretHash, secret.value);
  if (!sameSecret) fields.push(secret.kind === 'hash' ? 'client_secret_hash' : 'client_secret');
  return fields;
}

function clientIdOf(record: ImportRecord): string | null {
  const id = 'fields' in record ? record.fields['client_id'] : undefined;
  return typeof id === 'string' && id !== '' ? id : null;
}

async function compareWithStore(existing: OAuthClient, wanted: OAuthClient, secret: ImportedSecret): Promise<Omit<ImportRowResult, 'line' | 'clientId'>> {
  const changed = await differences(existing, wanted, secret);
  if (changed.length === 0) return { outcome: 'unchanged' };
  return { outcome: 'conflict', message: `already registered with a different ${changed.join(', ')}` };
}

/** Values the registration rules name in their own messages: flows, authentication methods, booleans. */
const RULE_WORDS: ReadonlySet<string> = new Set(['true', 'false', 'authorization_code', 'client_credentials', ...CLIENT_AUTH_METHODS]);

/** The registration rules' field names (the admin API's) → the file's columns, for a row's message. */
const FILE_WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\brequirePkce\b/g, 'require_pkce'],
  [/\btokenEndpointAuthMethod\b/g, 'token_endpoint_auth_method'],
  [/\bcredentialsIssuedAt\b/g, 'credentials_issued_at'],
  [/\bclientId\b/g, 'client_id'],
];

/** `message` naming the file's columns where the rules name the admin API's fields (`requirePkce` → `require_pkce`). */
function inFileWords(message: string): string {
  return FILE_WORDS.reduce((text, [field, column]) => text.replace(field, column), message);
}

/**
 * A row's refusal with each of the row's cells (and list items) shown as its field's name: the registration rules
 * quote what they refuse (a redirect URI), and a file whose columns are out of place may hold a secret in any cell,
 * so a message never shows a cell's content (README: "a message never contains a secret").
 */
function withoutCells(message: string, fields: ImportFields): string {
  const cells: [string, string][] = [];
  for (const [field, value] of Object.entries(fields)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      // The rules' own words ("must be true or false") stay: a cell holding one is nobody's secret.
      if (typeof item !== 'string' || item.length < 3 || RULE_WORDS.has(item)) continue;
      cells.push([field, item], [field, JSON.stringify(item).slice(1, -1)]);
    }
  }
  // The longest first, so that a cell inside another is not replaced within it.
  cells.sort((a, b) => b[1].length - a[1].length);
  return cells.reduce((text, [field, cell]) => text.split(cell).join(`<${field}>`), message);
}

/**
 * Refuses input that is not `parseImportFile`'s rows before anything is read or written: plain JavaScript can pass
 * the file's objects themselves (`{ client_id, … }`), which would otherwise fail deep inside with a TypeError that
 * names nothing the caller wrote.
 */
function checkRecords(records: readonly ImportRecord[]): void {
  if (!Array.isArray(records)) throw new TypeError('importClients: records must be an array of rows, as parseImportFile returns them');
  records.forEach((record: unknown, index) => {
    const row = record as { line?: unknown; fields?: unknown; error?: unknown } | null;
    const fine = typeof row === 'object' && row !== null && Number.isInteger(row.line)
      && ((typeof row.fields === 'object' && row.fields !== null && !Array.isArray(row.fields)) || typeof row.error === 'string');
    if (!fine) {
      throw new TypeError(`importClients: records[${index}] is not a row as parseImportFile returns it ({ line, fields: { client_id, … } }): `
        + 'parse the file with parseImportFile(text, format), or wrap each object as { line, fields }');
    }
  });
}

/**
 * Imports integrations from parsed rows (see `parseImportFile`), in two phases:
 * 1. every row is read and validated by the rules of registration (`buildClientRecord`), and compared with
 *    the store: a client_id already there with the same data is `unchanged` (the import is idempotent), with
 *    different data a `conflict`, never overwritten. A client_id repeated in the file is invalid.
 * 2. only if no row is `invalid` or in `conflict` (or `skipInvalid`), the new ones are written: plaintext
 *    secrets hashed with scrypt (`hashSecretScrypt`), given hashes stored as they are.
 * The original `credentials_issued_at` is kept, so each integration keeps its base address (SPEC §9).
 * Interrupted (a store outage while writing), it can simply be run again: what was written is `unchanged`.
 * @throws TypeError when the store lacks the administration tier, or `records` are not `parseImportFile`'s rows
 *   (nothing written); store errors as they come.
 * @see RFC 6749 §2 (client registration), §2.3.1 (client password); RFC 7591 §2; SPEC §9.
 */
export async function importClients(store: Store, records: readonly ImportRecord[], options: ImportClientsOptions = {}): Promise<ImportReport> {
  const clients = requireAdministration(store, 'importClients').clients;
  checkRecords(records);
  const results: ImportRowResult[] = [];
  const planned: Planned[] = [];
  const seen = new Map<string, number>();
  for (const record of records) {
    const clientId = clientIdOf(record);
    const result = (outcome: ImportOutcome, message?: string): void => {
      results.push({ line: record.line, clientId, outcome, ...(message === undefined ? {} : { message }) });
    };
    if ('error' in record) {
      result('invalid', record.error);
      continue;
    }
    let wanted: OAuthClient;
    let secret: ImportedSecret;
    try {
      const row = readImportRow(record.fields);
      secret = row.secret;
      wanted = buildClientRecord(row.input, secret.kind === 'hash' ? secret.value : PLACEHOLDER_HASH, options.scopes ? { scopes: options.scopes } : {});
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      result('invalid', inFileWords(withoutCells(error.message, record.fields)));
      continue;
    }
    const earlier = seen.get(wanted.clientId);
    if (earlier !== undefined) {
      result('invalid', `client_id repeated from line ${earlier}`);
      continue;
    }
    seen.set(wanted.clientId, record.line);
    const existing = await clients.findClient(wanted.clientId);
    if (existing) {
      const { outcome, message } = await compareWithStore(existing, wanted, secret);
      result(outcome, message);
      continue;
    }
    planned.push({ index: results.length, record: wanted, secret });
    result('would_create');
    if (secret.kind === 'plaintext' && secret.value.length < WEAK_SECRET_LENGTH) {
      results[results.length - 1] = {
        ...results[results.length - 1]!,
        warning: `client_secret is ${secret.value.length} characters, easy to guess: rotate it (oauth-admin clients rotate-secret ID --grace 7d) once the integration has moved`,
      };
    }
  }
  const refused = options.skipInvalid !== true && results.some((r) => r.outcome === 'invalid' || r.outcome === 'conflict');
  const dryRun = options.dryRun === true;
  if (refused || dryRun) return { rows: results, refused, dryRun };
  for (let start = 0; start < planned.length; start += HASH_CONCURRENCY) {
    await Promise.all(planned.slice(start, start + HASH_CONCURRENCY).map(async ({ index, record, secret }) => {
      const clientSecretHash = secret.kind === 'hash' ? secret.value : await hashSecretScrypt(secret.value);
      const client: OAuthClient = { ...record, clientSecretHash, createdAt: new Date() };
      const done = results[index]!;
      if (await clients.createClient(client)) {
        results[index] = { ...done, outcome: 'created' };
        return;
      }
      // Registered by someone else since phase 1: compared again, never overwritten.
      const now = await clients.findClient(client.clientId);
      results[index] = now ? { ...done, ...(await compareWithStore(now, client, secret)) } : { ...done, outcome: 'conflict', message: 'could not be created' };
    }));
  }
  return { rows: results, refused: false, dryRun: false };
}
