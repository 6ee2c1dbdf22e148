// `oauth-admin clients import`: existing integrations keep their ids, secrets and original issue dates, hence their base address (SPEC §9).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type request from 'supertest';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { createTestApp, LEGACY_ISSUER, REDIRECT_URI, type TestApp, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { redeemCode, tokenRequest } from '../helpers/spec-requests.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import { hashSecretScrypt } from '../../src/crypto/scrypt-secret.js';
import bcrypt from 'bcryptjs';

const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');

let dir: string;
let storeFile: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-import-'));
  storeFile = join(dir, 'oauth.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

// The integrations of the production server being migrated: their secrets as the partners hold them.
const LEGACY_PLAIN: TestClient = { clientId: 'legacy-sync', clientSecret: 'hunter2-from-2019' };
const LEGACY_SCRYPT: TestClient = { clientId: 'legacy-scrypt', clientSecret: 'partner password 2020' };
const LEGACY_CODE: TestClient = { clientId: 'legacy-crm', clientSecret: 'crm-legacy-secret' };
const CURRENT_SHA: TestClient = { clientId: 'current-sha', clientSecret: 'Qm9vdHN0cmFwcGVkLXNlY3JldC0yNTYtYml0cy14eHg' };
const CURRENT_PLAIN: TestClient = { clientId: 'current-plain', clientSecret: 'short' };

let scryptHash: string;
beforeAll(async () => {
  scryptHash = await hashSecretScrypt(LEGACY_SCRYPT.clientSecret);
});

type Row = Record<string, unknown>;

function rows(): Row[] {
  return [
    { client_id: LEGACY_PLAIN.clientId, client_secret: LEGACY_PLAIN.clientSecret, name: 'Legacy Sync', flow: 'client_credentials', scopes: ['envelopes:read'], credentials_issued_at: '2019-03-01' },
    { client_id: LEGACY_SCRYPT.clientId, client_secret_hash: scryptHash, name: 'Legacy Partner', flow: 'client_credentials', credentials_issued_at: '2021-01-14T23:59:59Z' },
    { client_id: LEGACY_CODE.clientId, client_secret: LEGACY_CODE.clientSecret, name: 'Legacy CRM', flow: 'authorization_code', redirect_uris: [REDIRECT_URI], scopes: ['envelopes:read'], credentials_issued_at: '2020-06-01T12:00:00+02:00' },
    { client_id: CURRENT_SHA.clientId, client_secret_hash: hashSecret(CURRENT_SHA.clientSecret), name: 'Current Sync', flow: 'client_credentials', credentials_issued_at: '2021-01-15' },
    { client_id: CURRENT_PLAIN.clientId, client_secret: CURRENT_PLAIN.clientSecret, name: 'Current Small', flow: 'client_credentials', require_pkce: false, token_endpoint_auth_method: 'client_secret_basic', credentials_issued_at: '2023-09-30T08:00:00Z' },
  ];
}

function jsonLines(list: readonly Row[]): string {
  return `${list.map((row) => JSON.stringify(row)).join('\n')}\n`;
}

const CSV_COLUMNS = ['client_id', 'client_secret', 'client_secret_hash', 'name', 'flow', 'redirect_uris', 'scopes', 'require_pkce', 'token_endpoint_auth_method', 'credentials_issued_at'];

/** RFC 4180: every cell quoted, quotes doubled, lists space-separated. */
function csv(list: readonly Row[]): string {
  const cell = (value: unknown): string => {
    const text = value === undefined ? '' : Array.isArray(value) ? value.join(' ') : String(value);
    return `"${text.replace(/"/g, '""')}"`;
  };
  return `${[CSV_COLUMNS.join(','), ...list.map((row) => CSV_COLUMNS.map((c) => cell(row[c])).join(','))].join('\r\n')}\r\n`;
}

function writeImport(name: string, content: string): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}

interface JsonReport {
  readonly refused: boolean;
  readonly dry_run: boolean;
  readonly counts: Record<string, number>;
  readonly rows: { line: number; client_id: string | null; outcome: string; message?: string; warning?: string }[];
}

async function importJson(file: string, ...flags: string[]): Promise<{ result: CliResult; report: JsonReport }> {
  const result = await runCli(storeFile, ['clients', 'import', file, '--json', ...flags]);
  return { result, report: JSON.parse(result.stdout) as JsonReport };
}

async function listedIds(): Promise<string[]> {
  const listed = await runCli(storeFile, ['clients', 'list', '--json']);
  expect(listed.code).toBe(0);
  return (JSON.parse(listed.stdout) as { client_id: string }[]).map((c) => c.client_id).sort();
}

/** Runs `work` against an app serving the imported SQLite store at {auth_url} and {legacy_auth_url} (/legacy). */
async function withApp(work: (t: TestApp) => Promise<void>): Promise<void> {
  const store = createSqliteStore({ filename: storeFile });
  try {
    await work(await createTestApp({}, store));
  } finally {
    await store.close();
  }
}

function clientCredentials(t: TestApp, prefix: string, client: TestClient): request.Test {
  return tokenRequest(t.app, prefix, client, { grant_type: 'client_credentials', client_id: client.clientId });
}

function expectInvalidClient(res: request.Response): string {
  expect(res.status, res.text).toBe(401);
  expect(res.body.error).toBe('invalid_client');
  return res.body.error_description as string;
}

/** The integration gets a token at `own` and is refused at the other address with invalid_client naming `own`'s issuer. */
async function expectServedOnlyAt(t: TestApp, client: TestClient, own: '' | '/legacy'): Promise<void> {
  const ok = await clientCredentials(t, own, client);
  expect(ok.status, `${client.clientId} at ${own || '/'}: ${ok.text}`).toBe(200);
  expect(typeof ok.body.access_token).toBe('string');
  const other = own === '' ? '/legacy' : '';
  const description = expectInvalidClient(await clientCredentials(t, other, client));
  if (own === '/legacy') expect(description).toContain(LEGACY_ISSUER);
  else expect(description).not.toContain(LEGACY_ISSUER);
}

describe('oauth-admin clients import: existing integrations at the right address (SPEC §9)', () => {
  it('imports JSON Lines with pre- and post-2021 integrations (plaintext, scrypt and SHA-256 secrets) and serves each at its own address only', async () => {
    const { result, report } = await importJson(writeImport('clients.jsonl', jsonLines(rows())));
    expect(result.code, result.stderr).toBe(0);
    expect(report.refused).toBe(false);
    expect(report.rows.map((r) => [r.line, r.client_id, r.outcome])).toEqual([
      [1, 'legacy-sync', 'created'], [2, 'legacy-scrypt', 'created'], [3, 'legacy-crm', 'created'],
      [4, 'current-sha', 'created'], [5, 'current-plain', 'created'],
    ]);
    await withApp(async (t) => {
      await expectServedOnlyAt(t, LEGACY_PLAIN, '/legacy');
      await expectServedOnlyAt(t, LEGACY_SCRYPT, '/legacy');
      await expectServedOnlyAt(t, CURRENT_SHA, '');
      await expectServedOnlyAt(t, CURRENT_PLAIN, '');
      // The imported code-flow integration runs the whole flow at {legacy_auth_url}, and is refused at {auth_url}.
      expect(expectInvalidClient(await redeemCode(t.app, '', LEGACY_CODE, 'not-a-code'))).toContain(LEGACY_ISSUER);
      const code = await obtainCode(t.app, LEGACY_CODE, { prefix: '/legacy' });
      const token = await redeemCode(t.app, '/legacy', LEGACY_CODE, code);
      expect(token.status, token.text).toBe(200);
    });
  });

  it('imports a plaintext secret under 16 characters as it is, with a warning naming its length and the rotation, never the secret', async () => {
    const file = writeImport('clients.jsonl', jsonLines(rows()));
    const { result, report } = await importJson(file, '--dry-run');
    expect(result.code, result.stderr).toBe(0);
    const warned = report.rows.filter((row) => row.warning !== undefined).map((row) => [row.client_id, row.warning]);
    expect(warned).toEqual([[CURRENT_PLAIN.clientId,
      'client_secret is 5 characters, easy to guess: rotate it (oauth-admin clients rotate-secret ID --grace 7d) once the integration has moved']]);
    const text = await runCli(storeFile, ['clients', 'import', file]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/created +current-plain \(warning: client_secret is 5 characters, easy to guess/);
    expect(text.stdout).not.toContain(CURRENT_PLAIN.clientSecret);
  });

  it('imports the same integrations from CSV (RFC 4180 quoting, space-separated lists) with the same result', async () => {
    const { result, report } = await importJson(writeImport('clients.csv', csv(rows())));
    expect(result.code, result.stderr).toBe(0);
    expect(report.rows.map((r) => [r.line, r.outcome])).toEqual([[2, 'created'], [3, 'created'], [4, 'created'], [5, 'created'], [6, 'created']]);
    await withApp(async (t) => {
      await expectServedOnlyAt(t, LEGACY_PLAIN, '/legacy');
      await expectServedOnlyAt(t, LEGACY_SCRYPT, '/legacy');
      await expectServedOnlyAt(t, CURRENT_SHA, '');
      await expectServedOnlyAt(t, CURRENT_PLAIN, '');
    });
    const shown = JSON.parse((await runCli(storeFile, ['clients', 'show', LEGACY_CODE.clientId, '--json'])).stdout) as Record<string, unknown>;
    expect(shown['redirect_uris']).toEqual([REDIRECT_URI]);
    expect(shown['scopes']).toEqual(['envelopes:read']);
    expect(shown['credentials_issued_at']).toBe('2020-06-01T10:00:00.000Z');
  });

  it('stores a plaintext secret as a salted scrypt hash, never as itself or its SHA-256', async () => {
    await importJson(writeImport('clients.jsonl', jsonLines(rows())));
    const store = createSqliteStore({ filename: storeFile });
    try {
      const stored = (await store.clients.findClient(LEGACY_PLAIN.clientId))!.clientSecretHash;
      expect(stored).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
      expect(stored).not.toContain(LEGACY_PLAIN.clientSecret);
      expect((await store.clients.findClient(LEGACY_SCRYPT.clientId))!.clientSecretHash).toBe(scryptHash);
      expect((await store.clients.findClient(CURRENT_SHA.clientId))!.clientSecretHash).toBe(hashSecret(CURRENT_SHA.clientSecret));
    } finally {
      await store.close();
    }
  });

  it('imports bcrypt hashes of an existing Node server: served at their address, wrong secrets refused, re-import with the plaintext unchanged', async () => {
    const partner: TestClient = { clientId: 'bcrypt-partner', clientSecret: 'from the old passport server' };
    const row = { client_id: partner.clientId, client_secret_hash: bcrypt.hashSync(partner.clientSecret, 10), name: 'Old Node Partner', flow: 'client_credentials', credentials_issued_at: '2018-11-05' };
    const { result, report } = await importJson(writeImport('bcrypt.jsonl', jsonLines([row])));
    expect(result.code, result.stderr).toBe(0);
    expect(report.rows.map((r) => r.outcome)).toEqual(['created']);
    await withApp(async (t) => {
      await expectServedOnlyAt(t, partner, '/legacy');
      expectInvalidClient(await clientCredentials(t, '/legacy', { ...partner, clientSecret: 'from the old passport serve' }));
    });
    // The CLI checks the plaintext against the stored bcrypt hash (in its worker thread) and exits afterwards.
    const plain = { ...row, client_secret_hash: undefined, client_secret: partner.clientSecret };
    const again = await importJson(writeImport('plain.jsonl', jsonLines([plain])));
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.report.rows.map((r) => r.outcome)).toEqual(['unchanged']);
  });

  it('refuses a wrong secret for a scrypt integration with 401 invalid_client, also after the right one was accepted', async () => {
    await importJson(writeImport('clients.jsonl', jsonLines(rows())));
    await withApp(async (t) => {
      const wrong = { ...LEGACY_SCRYPT, clientSecret: 'partner password 2021' };
      expectInvalidClient(await clientCredentials(t, '/legacy', wrong));
      expect((await clientCredentials(t, '/legacy', LEGACY_SCRYPT)).status).toBe(200);
      expectInvalidClient(await clientCredentials(t, '/legacy', wrong));
      expectInvalidClient(await clientCredentials(t, '/legacy', { ...LEGACY_PLAIN, clientSecret: 'hunter3-from-2019' }));
    });
  });
});

describe('oauth-admin clients import: whole-file semantics, idempotence, report', () => {
  it('is idempotent: importing the same file again reports every row unchanged and adds nothing', async () => {
    const file = writeImport('clients.jsonl', jsonLines(rows()));
    expect((await importJson(file)).result.code).toBe(0);
    const again = await importJson(file);
    expect(again.result.code, again.result.stderr).toBe(0);
    expect(again.report.rows.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
    expect(await listedIds()).toEqual(['current-plain', 'current-sha', 'legacy-crm', 'legacy-scrypt', 'legacy-sync']);
    // The same data in the other format is the same data.
    const csvAgain = await importJson(writeImport('clients.csv', csv(rows())));
    expect(csvAgain.report.counts['unchanged']).toBe(5);
  });

  it('refuses the whole file on one bad row: exit 2, every bad row named with its line, nothing written', async () => {
    const list = rows();
    const bad = [
      ...list.slice(0, 2),
      { ...list[2], redirect_uris: [] }, // the code flow needs a redirect URI
      list[3]!,
      { ...list[4], credentials_issued_at: undefined }, // no original issue date
    ];
    const text = `${jsonLines(bad)}not json\n`;
    const { result, report } = await importJson(writeImport('clients.jsonl', text));
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'usage_error' });
    expect(report.refused).toBe(true);
    expect(report.rows.map((r) => [r.line, r.outcome])).toEqual([
      [1, 'would_create'], [2, 'would_create'], [3, 'invalid'], [4, 'would_create'], [5, 'invalid'], [6, 'invalid'],
    ]);
    expect(report.rows[2]!.message).toMatch(/redirect URI/);
    expect(report.rows[4]!.message).toMatch(/credentials_issued_at .*required/);
    expect(report.rows[5]!.message).toBe('not valid JSON');
    expect(existsSync(storeFile), 'no store was created for a refused file').toBe(false);
    await runCli(storeFile, ['clients', 'create', '--name', 'Existing', '--flow', 'client_credentials']);
    expect((await importJson(writeImport('clients.jsonl', text))).result.code, 'refused against an existing store too').toBe(2);
    expect(await listedIds()).toHaveLength(1);
  });

  it('names the bad rows in the text report too, with their line and client_id', async () => {
    const text = jsonLines([rows()[0]!, { ...rows()[1], flow: 'implicit' }]);
    const result = await runCli(storeFile, ['clients', 'import', writeImport('clients.jsonl', text)]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^line 2 +invalid +legacy-scrypt: flow must be authorization_code or client_credentials$/m);
    expect(result.stderr).toMatch(/^oauth-admin: file refused, nothing written/);
  });

  it('with --skip-invalid imports the valid rows and reports the others', async () => {
    const list = rows();
    const text = jsonLines([list[0]!, { ...list[1], client_secret: 'both given' }, list[3]!, { ...list[4], client_secret: undefined, client_secret_hash: '$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo' }]);
    const { result, report } = await importJson(writeImport('clients.jsonl', text), '--skip-invalid');
    expect(result.code, result.stderr).toBe(0);
    expect(report.rows.map((r) => [r.client_id, r.outcome])).toEqual([
      ['legacy-sync', 'created'], ['legacy-scrypt', 'invalid'], ['current-sha', 'created'], ['current-plain', 'invalid'],
    ]);
    expect(report.rows[1]!.message).toBe('give exactly one of client_secret and client_secret_hash');
    expect(report.rows[3]!.message).toMatch(/client_secret_hash has an unknown format/);
    expect(await listedIds()).toEqual(['current-sha', 'legacy-sync']);
  });

  it('reports a client_id already registered with other data as a conflict, refuses the file and never overwrites', async () => {
    await importJson(writeImport('first.jsonl', jsonLines(rows())));
    const list = rows();
    const changed = [
      { ...list[0], credentials_issued_at: '2021-03-01' }, // would move it to the main address
      { ...list[2], client_secret: 'another secret' },
      list[3]!,
      { client_id: 'brand-new', client_secret: 'new one', name: 'New', flow: 'client_credentials', credentials_issued_at: '2020-01-01' },
    ];
    const { result, report } = await importJson(writeImport('second.jsonl', jsonLines(changed)));
    expect(result.code).toBe(2);
    expect(report.rows.map((r) => [r.client_id, r.outcome])).toEqual([
      ['legacy-sync', 'conflict'], ['legacy-crm', 'conflict'], ['current-sha', 'unchanged'], ['brand-new', 'would_create'],
    ]);
    expect(report.rows[0]!.message).toBe('already registered with a different credentials_issued_at');
    expect(report.rows[1]!.message).toBe('already registered with a different client_secret');
    expect(report.rows[1]!.message).not.toContain('another secret');
    expect(await listedIds()).not.toContain('brand-new');
    await withApp(async (t) => {
      await expectServedOnlyAt(t, LEGACY_PLAIN, '/legacy');
    });
    // --skip-invalid leaves the conflicting ones as they are and imports the new one.
    const skipped = await importJson(writeImport('second.jsonl', jsonLines(changed)), '--skip-invalid');
    expect(skipped.report.rows.map((r) => r.outcome)).toEqual(['conflict', 'conflict', 'unchanged', 'created']);
  });

  it('refuses a client_id repeated within the file', async () => {
    const list = rows();
    const { result, report } = await importJson(writeImport('clients.jsonl', jsonLines([list[0]!, list[1]!, list[0]!])));
    expect(result.code).toBe(2);
    expect(report.rows[2]).toMatchObject({ line: 3, outcome: 'invalid', message: 'client_id repeated from line 1' });
  });

  it('with --dry-run checks and reports every row but writes nothing', async () => {
    await runCli(storeFile, ['clients', 'create', '--name', 'Existing', '--flow', 'client_credentials']);
    const { result, report } = await importJson(writeImport('clients.jsonl', jsonLines(rows())), '--dry-run');
    expect(result.code, result.stderr).toBe(0);
    expect(report.dry_run).toBe(true);
    expect(report.rows.every((r) => r.outcome === 'would_create')).toBe(true);
    expect(await listedIds()).toHaveLength(1);
  });

  it('asks for --format when the file name does not tell, and reads the file as told', async () => {
    const unknownName = await runCli(storeFile, ['clients', 'import', writeImport('clients.txt', jsonLines(rows()))]);
    expect(unknownName.code).toBe(2);
    expect(unknownName.stderr).toMatch(/--format jsonl or --format csv/);
    const { result, report } = await importJson(writeImport('clients.txt', csv(rows().slice(0, 1))), '--format', 'csv');
    expect(result.code, result.stderr).toBe(0);
    expect(report.rows.map((r) => r.outcome)).toEqual(['created']);
  });

  it('reads standard input for -', async () => {
    const child = execFile(process.execPath, [CLI, 'clients', 'import', '-', '--format', 'jsonl', '--json'], {
      env: { ...process.env, OAUTH_STORE: `sqlite:${storeFile}` },
    });
    child.stdin!.end(jsonLines(rows().slice(3)));
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as JsonReport).rows.map((r) => r.outcome)).toEqual(['created', 'created']);
    expect(await listedIds()).toEqual(['current-plain', 'current-sha']);
  });

  it('never shows a secret in a message, whichever column it is in: a quote in it, columns swapped, a secret as a redirect URI', async () => {
    const secret = 'Partner-Pa55word-0x7f';
    const quoted = 'client_id,name,flow,credentials_issued_at,client_secret\ncsv-1,Alpha,client_credentials,2020-01-01,' + `${secret}"x\n`;
    const refused = await runCli(storeFile, ['clients', 'import', writeImport('quoted.csv', quoted), '--json']);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr)).toMatchObject({ error: 'usage_error', message: expect.stringMatching(/^not valid CSV: Invalid Opening Quote: a quote is found on field \d+ at line 2$/) });
    // Row 2: the secret and the date swapped. Row 3: the secret put in the redirect_uris column.
    const swapped = 'client_id,name,flow,client_secret,credentials_issued_at,redirect_uris\n' +
      `csv-2,Beta,client_credentials,2020-01-01,${secret},\n` +
      `csv-3,Gamma,authorization_code,other-secret,2020-01-01,${secret}-2\n`;
    const report = await runCli(storeFile, ['clients', 'import', writeImport('swapped.csv', swapped), '--json']);
    expect(report.code).toBe(2);
    for (const output of [report.stdout, report.stderr]) expect(output).not.toContain(secret);
    const messages = (JSON.parse(report.stdout) as JsonReport).rows.map((row) => row.message);
    expect(messages).toEqual([
      expect.stringMatching(/^credentials_issued_at must be an ISO 8601 date/),
      expect.stringMatching(/^redirect URI "<redirect_uris>" is not an absolute URL$/),
    ]);
  });

  it("keeps the rules' own words in a message: a require_pkce of \"true\" as text is \"must be true or false\", not a placeholder", async () => {
    const row = { client_id: 'jsonl-text-bool', client_secret: 'Partner-Pa55word-0x7f', name: 'Text', flow: 'client_credentials', require_pkce: 'true', credentials_issued_at: '2020-01-01' };
    const report = await runCli(storeFile, ['clients', 'import', writeImport('text-bool.jsonl', jsonLines([row as unknown as Row])), '--json']);
    expect(report.code).toBe(2);
    expect((JSON.parse(report.stdout) as JsonReport).rows.map((r) => r.message)).toEqual(['require_pkce must be true or false']);
    expect(report.stdout).not.toContain('Partner-Pa55word-0x7f');
  });

  it('refuses a client_id outside VSCHAR (RFC 6749 Appendix A.1) as an invalid row, exit 2, and accepts one with : % + (usage error, nothing written)', async () => {
    const row = (clientId: string) => ({ client_id: clientId, client_secret: 'Partner-Pa55word-0x7f', name: 'Partner', flow: 'client_credentials', credentials_issued_at: '2020-01-01' });
    const file = writeImport('vschar.jsonl', jsonLines([row('café-partner'), row('tab\tpartner'), row('tenant:partner+7%41')] as unknown as Row[]));
    const report = await runCli(storeFile, ['clients', 'import', file, '--json']);
    expect(report.code).toBe(2);
    const rows = (JSON.parse(report.stdout) as JsonReport).rows;
    expect(rows.map((r) => r.outcome)).toEqual(['invalid', 'invalid', 'would_create']);
    expect(rows[0]!.message).toBe('client_id must be 1–255 characters from %x20-7E (printable ASCII and space: RFC 6749 Appendix A.1 VSCHAR)');
    expect((JSON.parse(report.stdout) as JsonReport).refused).toBe(true);
  });

  it('refuses a CSV file with an unknown column as a whole, naming the column', async () => {
    const text = 'client_id,client_secret,name,flow,credential_issued_at\nx,y,X,client_credentials,2020-01-01\n';
    const result = await runCli(storeFile, ['clients', 'import', writeImport('clients.csv', text), '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'usage_error', message: expect.stringContaining('"credential_issued_at"') });
    expect(result.stdout).toBe('');
  });
});
