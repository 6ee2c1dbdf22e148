// A SQLite file that holds no store (0 bytes, another application's database) is no store: oauth-admin never makes it one.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

/** The commands that need an existing store, with their arguments. */
const NEEDS_A_STORE: readonly (readonly string[])[] = [
  ['clients', 'list'],
  ['clients', 'show', 'some-client'],
  ['clients', 'update', 'some-client', '--name', 'Renamed'],
  ['clients', 'rotate-secret', 'some-client'],
  ['clients', 'disable', 'some-client'],
  ['clients', 'enable', 'some-client'],
  ['clients', 'delete', 'some-client', '--yes'],
  ['tokens', 'revoke', '--client', 'some-client'],
];

/** How `no_store` ends, by what the file holds: `clients create` makes a store in an empty file only. */
const EMPTY_ADVICE = 'create an integration first (oauth-admin clients create), or set OAUTH_STORE to the store your app uses';

/** Files that exist and hold no store, by how they were made, with what the error says of each. */
const NO_STORE_FILES: Readonly<Record<string, { make: (file: string) => void; says: (file: string) => string }>> = {
  'another application\'s database': {
    make: (file) => foreignDatabase(file, 0),
    says: (file) => `no store at ${file}: it is a SQLite database with other data (OAUTH_STORE=sqlite:${file}); set OAUTH_STORE to the store your app uses`,
  },
  'another application\'s database that numbers its schema with user_version': {
    make: (file) => foreignDatabase(file, 3),
    says: (file) => `no store at ${file}: it is a SQLite database with other data (OAUTH_STORE=sqlite:${file}); set OAUTH_STORE to the store your app uses`,
  },
  'a 0-byte file': {
    make: (file) => writeFileSync(file, ''),
    says: (file) => `no store at ${file} (OAUTH_STORE=sqlite:${file}); ${EMPTY_ADVICE}`,
  },
};

let dir: string;
let file: string;

/** A database as another application leaves it: its own table and rows, in the default (rollback journal) mode. */
function foreignDatabase(path: string, userVersion: number): void {
  const db = new Database(path);
  db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL); INSERT INTO users (email) VALUES ('a@example.com')");
  db.pragma(`user_version = ${userVersion}`);
  db.close();
}

/** The folder's files and their bytes: what "changed nothing" means for a SQLite file (no -wal, -shm or journal either). */
function snapshot(): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).sort().map((name) => [name, readFileSync(join(dir, name)).toString('base64')]));
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-foreign-'));
  file = join(dir, 'otherapp.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.each(Object.entries(NO_STORE_FILES))('on %s', (_kind, { make, says }) => {
  it.each(NEEDS_A_STORE)('%s %s fails with no store, as for a missing file, and changes nothing', async (...args) => {
    make(file);
    const before = snapshot();
    const result = await runCli(file, args);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `oauth-admin: ${says(file)}\n` });
    expect(snapshot()).toEqual(before);
  });

  it('clients list --json reports no_store as JSON and changes nothing', async () => {
    make(file);
    const before = snapshot();
    const result = await runCli(file, ['clients', 'list', '--json']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({ error: 'no_store', message: says(file) });
    expect(snapshot()).toEqual(before);
  });
});

describe('a command that creates a store', () => {
  it('clients create on another application\'s database is a usage error and changes nothing', async () => {
    foreignDatabase(file, 0);
    const before = snapshot();
    const result = await runCli(file, ['clients', 'create', '--name', 'Typo', '--flow', 'client_credentials', '--json']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({
      error: 'usage_error',
      message: expect.stringMatching(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is a SQLite database with other data and no store`)),
    });
    expect(snapshot()).toEqual(before);
  });

  it('clients import on another application\'s database is a usage error and changes nothing', async () => {
    foreignDatabase(file, 0);
    const rows = join(dir, 'integrations.jsonl');
    writeFileSync(rows, `${JSON.stringify({ client_id: 'partner-1', client_secret: 'partner secret 2019', name: 'Partner', flow: 'client_credentials', credentials_issued_at: '2020-01-01' })}\n`);
    const before = snapshot();
    const result = await runCli(file, ['clients', 'import', rows, '--json']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'usage_error', message: expect.stringContaining('with other data and no store') });
    expect(snapshot()).toEqual(before);
  });

  it('an empty file is no store until clients create makes one there', async () => {
    writeFileSync(file, '');
    expect((await runCli(file, ['clients', 'list'])).code).toBe(1);
    const created = await runCli(file, ['clients', 'create', '--name', 'First', '--flow', 'client_credentials', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const listed = await runCli(file, ['clients', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'First' })]);
  });
});
