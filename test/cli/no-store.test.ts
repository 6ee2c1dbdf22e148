// Only `clients create` may create a store: every other command, run where there is none, fails and leaves no trace.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliWith, type CliResult } from '../helpers/run-cli.js';

/** The commands that need an existing store, with their arguments. */
const NEEDS_A_STORE: readonly (readonly string[])[] = [
  ['list'],
  ['show', 'some-client'],
  ['rotate-secret', 'some-client'],
  ['disable', 'some-client'],
  ['enable', 'some-client'],
];

let dir: string;

/** Runs oauth-admin in the empty folder; `storeUrl` undefined leaves OAUTH_STORE unset (the default store). */
function runInFolder(args: readonly string[], storeUrl?: string): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['OAUTH_STORE'];
  if (storeUrl !== undefined) env['OAUTH_STORE'] = storeUrl;
  return runCliWith(args, { cwd: dir, env });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-empty-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('a command that needs a store, in a folder without one', () => {
  it.each(NEEDS_A_STORE)('clients %s exits 1, names the missing store, and creates no file or directory', async (...args) => {
    const result = await runInFolder(['clients', ...args]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `oauth-admin: no store at ${join(dir, 'data', 'oauth.sqlite')} (OAUTH_STORE unset, default sqlite:./data/oauth.sqlite); ` +
        'create an integration first (oauth-admin clients create), or set OAUTH_STORE to the store your app uses\n',
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each(NEEDS_A_STORE)('clients %s --json reports no_store as JSON', async (...args) => {
    const result = await runInFolder(['clients', ...args, '--json']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const error = JSON.parse(result.stderr) as Record<string, unknown>;
    expect(error).toEqual({ error: 'no_store', message: expect.stringMatching(/^no store at /) });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a mistyped OAUTH_STORE path creates neither the file nor its directories', async () => {
    const result = await runInFolder(['clients', 'list'], 'sqlite:./typo/nested/oauth.sqlite');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no store at ${join(dir, 'typo', 'nested', 'oauth.sqlite')} (OAUTH_STORE=sqlite:./typo/nested/oauth.sqlite)`);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('clients create', () => {
  it.each(['', '  '])('with OAUTH_STORE set but empty (%j: a variable that expanded to nothing) is a usage error and creates no store', async (empty) => {
    const result = await runInFolder(['clients', 'create', '--name', 'First', '--flow', 'client_credentials', '--json'], empty);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({ error: 'usage_error', message: expect.stringContaining('OAUTH_STORE is set but empty') });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('creates the default store, which the other commands then use', async () => {
    const created = await runInFolder(['clients', 'create', '--name', 'First', '--flow', 'client_credentials', '--json']);
    expect(created.code).toBe(0);
    expect(existsSync(join(dir, 'data', 'oauth.sqlite'))).toBe(true);
    const clientId = String((JSON.parse(created.stdout) as Record<string, unknown>)['client_id']);
    const listed = await runInFolder(['clients', 'list', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ client_id: clientId, name: 'First' })]);
  });

  it('import --dry-run, the first step of a migration, checks the file against an empty store and creates none', async () => {
    const row = { client_id: 'partner-1', client_secret: 'partner secret', name: 'Partner', flow: 'client_credentials', credentials_issued_at: '2020-01-01' };
    const file = join(dir, 'clients.jsonl');
    writeFileSync(file, `${JSON.stringify(row)}\n`);
    const result = await runInFolder(['clients', 'import', file, '--dry-run', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ dry_run: true, refused: false, rows: [{ client_id: 'partner-1', outcome: 'would_create' }] });
    expect(readdirSync(dir)).toEqual(['clients.jsonl']);
  });

  it('import of a file refused as a whole creates no store; an accepted one creates it', async () => {
    const row = { client_id: 'partner-1', client_secret: 'partner secret', name: 'Partner', flow: 'client_credentials', credentials_issued_at: '2020-01-01' };
    const file = join(dir, 'clients.jsonl');
    writeFileSync(file, `${JSON.stringify({ ...row, flow: 'implicit' })}\n`);
    const refused = await runInFolder(['clients', 'import', file, '--json']);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toMatchObject({ dry_run: false, refused: true, rows: [{ outcome: 'invalid' }] });
    expect(readdirSync(dir)).toEqual(['clients.jsonl']);
    writeFileSync(file, `${JSON.stringify(row)}\n`);
    const imported = await runInFolder(['clients', 'import', file, '--json']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ dry_run: false, refused: false, rows: [{ client_id: 'partner-1', outcome: 'created' }] });
    expect(readdirSync(dir).sort()).toEqual(['clients.jsonl', 'data']);
  });

  it.each(['memory:', 'sqlite::memory:'])('refuses OAUTH_STORE=%s, which would keep nothing once the command ends', async (url) => {
    const result = await runInFolder(['clients', 'create', '--name', 'X', '--flow', 'client_credentials'], url);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/keeps nothing once the command ends/);
  });

  it('does not create a store when its input is refused', async () => {
    const result = await runInFolder(['clients', 'create', '--name', 'X', '--flow', 'client_credentials', '--issued-at', '2099-01-01']);
    expect(result.code).toBe(2);
    expect(readdirSync(dir)).toEqual([]);
  });
});

const postgresUrl = process.env.OAUTH_TEST_POSTGRES_URL ?? '';

describe.skipIf(!postgresUrl)('a command that needs a store, on a PostgreSQL schema and prefix without one', () => {
  const schema = `oauth_cli_nostore_${process.pid}`;
  /** The test database's URL with a password (trust auth ignores it) and the given store parameters. */
  const storeUrl = (params: string): string => `${postgresUrl.replace('://postgres@', '://postgres:pw-never-shown@')}${postgresUrl.includes('?') ? '&' : '?'}${params}`;

  async function schemaTables(): Promise<string[]> {
    const { default: pg } = await import('pg');
    const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
    try {
      const { rows } = await admin.query<{ name: string }>(
        'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [schema]);
      return rows.map((row) => row.name);
    } finally {
      await admin.end();
    }
  }

  afterEach(async () => {
    const { default: pg } = await import('pg');
    const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.end());
  });

  it('clients list exits 1 with no_store naming the schema and prefix, never the URL, and creates no table', async () => {
    const result = await runInFolder(['clients', 'list'], storeUrl(`schema=${schema}&table_prefix=ah_`));
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `oauth-admin: no store at PostgreSQL schema "${schema}" with table prefix "ah_" (OAUTH_STORE); ` +
        'create an integration first (oauth-admin clients create), or set OAUTH_STORE to the store your app uses (its ?schema= and ?table_prefix=)\n',
    });
    expect(await schemaTables()).toEqual([]);
  });

  it('clients create makes the prefixed tables, which list then reads; another prefix is still no store', async () => {
    const created = await runInFolder(['clients', 'create', '--name', 'Prefixed', '--flow', 'client_credentials', '--json'], storeUrl(`schema=${schema}&table_prefix=ah_`));
    expect(created.code, created.stderr).toBe(0);
    const tables = await schemaTables();
    expect(tables).toContain('ah_clients');
    expect(tables.filter((name) => !name.startsWith('ah_'))).toEqual([]);
    const listed = await runInFolder(['clients', 'list', '--json'], storeUrl(`schema=${schema}&table_prefix=ah_`));
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'Prefixed' })]);
    const unprefixed = await runInFolder(['clients', 'list', '--json'], storeUrl(`schema=${schema}`));
    expect(unprefixed.code).toBe(1);
    expect(JSON.parse(unprefixed.stderr)).toMatchObject({ error: 'no_store' });
    expect((await schemaTables()).filter((name) => !name.startsWith('ah_'))).toEqual([]);
  });

  it('a parameter the store does not take (tablePrefix) is a usage error, not an empty store', async () => {
    const result = await runInFolder(['clients', 'list'], storeUrl(`schema=${schema}&tablePrefix=ah_`));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('oauth-admin: OAUTH_STORE: unknown postgres: parameter "tablePrefix"; this store\'s own are schema, table_prefix, max_integration_copies\n');
    expect(await schemaTables()).toEqual([]);
  });
});
