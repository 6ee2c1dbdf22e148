// The oauth-admin command, run as a real child process against a temporary SQLite store.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';

let dir: string;
let storeFile: string;

function run(args: readonly string[]): Promise<CliResult> {
  return runCli(storeFile, args);
}

async function createJson(args: readonly string[]): Promise<Record<string, unknown>> {
  const result = await run(['clients', 'create', ...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** The integrations the store holds, through `list --json`; none when there is no store at all. */
async function registered(): Promise<Record<string, unknown>[]> {
  const result = await run(['clients', 'list', '--json']);
  if (result.code === 1 && existsSync(storeFile) === false) return [];
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>[];
}

/** Creates the store file with no integration in it, as the app does on its first start. */
async function createEmptyStore(): Promise<void> {
  const { createSqliteStore } = await import('../../dist/stores/sqlite/index.js');
  await createSqliteStore({ filename: storeFile }).close();
}

function sha256(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** Every byte SQLite wrote for the store: the main file plus its WAL and shared-memory files. */
function storeBytes(): Buffer {
  return Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))));
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-'));
  storeFile = join(dir, 'oauth.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('oauth-admin clients create', () => {
  it('prints the client_id and, once, the client_secret with a warning', async () => {
    const result = await run(['clients', 'create', '--name', 'Acme CRM', '--flow', 'client_credentials']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/client_id: +[A-Za-z0-9_-]{43}\n/);
    expect(result.stdout).toMatch(/client_secret: +[A-Za-z0-9_-]{43}\n/);
    expect(result.stdout).toMatch(/shown only this once/);
  });

  it('--json prints one JSON object with the secret and the registration', async () => {
    const created = await createJson([
      '--name', 'Acme CRM', '--flow', 'authorization_code',
      '--redirect-uri', 'https://crm.example.com/cb', '--redirect-uri', 'http://localhost:8080/cb',
      '--scope', 'envelopes:read', '--scope', 'envelopes:write', '--require-pkce',
    ]);
    expect(created).toMatchObject({
      name: 'Acme CRM',
      flow: 'authorization_code',
      redirect_uris: ['https://crm.example.com/cb', 'http://localhost:8080/cb'],
      scopes: ['envelopes:read', 'envelopes:write'],
      require_pkce: true,
      disabled: false,
    });
    expect(created['client_id']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created['client_secret']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(String(created['credentials_issued_at']))).toBeGreaterThan(Date.now() - 60_000);
    expect(created).not.toHaveProperty('client_secret_hash');
  });

  it('--issued-at is read as UTC midnight', async () => {
    const created = await createJson(['--name', 'Old CRM', '--flow', 'client_credentials', '--issued-at', '2020-06-01']);
    expect(created['credentials_issued_at']).toBe('2020-06-01T00:00:00.000Z');
  });

  it('refuses an --issued-at in the future with exit code 2, registering nothing', async () => {
    // Two days ahead, so a run across midnight UTC cannot turn it into today.
    const soon = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    for (const value of [soon, '2099-01-01']) {
      const result = await run(['clients', 'create', '--name', 'X', '--flow', 'client_credentials', '--issued-at', value]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(new RegExp(`--issued-at ${value} is in the future`));
    }
    expect(existsSync(storeFile)).toBe(false);
  });

  it('accepts today as --issued-at (UTC)', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const created = await createJson(['--name', 'New CRM', '--flow', 'client_credentials', '--issued-at', today]);
    expect(created['credentials_issued_at']).toBe(`${today}T00:00:00.000Z`);
  });

  it.each([['2021-13-01'], ['2021-02-30'], ['01/15/2021'], ['2021-1-5'], ['yesterday']])(
    'rejects --issued-at %s with exit code 2 and a message on stderr',
    async (value) => {
      const result = await run(['clients', 'create', '--name', 'X', '--flow', 'client_credentials', '--issued-at', value]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/--issued-at must be a date YYYY-MM-DD/);
    },
  );

  it.each([
    ['an authorization_code client without redirect URI', ['--name', 'X', '--flow', 'authorization_code'], /redirect URI/],
    ['a client_credentials client with a redirect URI', ['--name', 'X', '--flow', 'client_credentials', '--redirect-uri', 'https://a.example/cb'], /redirect URI/],
    ['a plain-http non-loopback redirect URI', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'http://a.example/cb'], /https/],
    ['a javascript: redirect URI', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'javascript:alert(document.cookie)//'], /must use https$/m],
    ['a redirect URI of a private-use scheme', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'com.example.app:/cb'], /must use https$/m],
    ['a plain-http redirect URI on a host that ends in "localhost" but is no subdomain of it', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'http://evil-localhost/cb'], /https/],
    ['a redirect URI with a fragment', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://a.example/cb#x'], /fragment/],
    // URL parsers disagree on it: a browser reads good.example, an RFC 3986 parser userinfo before evil.example.
    ['a redirect URI with a backslash (RFC 3986 §2)', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://good.example\\@evil.example/cb'], /has "\\\\", which a URI may not hold/],
    ['a redirect URI with credentials', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://user@a.example/cb'], /must not carry credentials/],
    ['a redirect URI with a password and an empty user name', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://:secret@a.example/cb'], /must not carry credentials/],
    ['a redirect URI with a wildcard host (redirect URIs match exactly, RFC 9700 §2.1)', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://*.a.example/cb'], /wildcard/],
    ['a redirect URI with a space', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://a.example/c b'], /has " ", which a URI may not hold/],
    ['a redirect URI with a % that starts no escape', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://a.example/100%'], /has "%"/],
    ['a redirect URI whose query has state (RFC 6749 §3.1: it would be sent twice)', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://a.example/cb?state=fixed'], /has state in its query/],
    ['a redirect URI whose query has code', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://a.example/cb?tab=1&code=c0'], /has code in its query/],
    ['a redirect URI whose query has iss', ['--name', 'X', '--flow', 'authorization_code', '--redirect-uri', 'https://a.example/cb?iss=x'], /has iss in its query/],
    ['a blank name', ['--name', '  ', '--flow', 'client_credentials'], /name/],
    ['a malformed scope', ['--name', 'X', '--flow', 'client_credentials', '--scope', 'a"b'], /scope/],
    ['an unknown flow', ['--name', 'X', '--flow', 'password'], /flow/],
    ['a missing --flow', ['--name', 'X'], /--flow/],
    ['an unknown option', ['--name', 'X', '--flow', 'client_credentials', '--colour', 'red'], /unknown option/],
  ])('rejects %s with exit code 2', async (_label, args, message) => {
    const result = await run(['clients', 'create', ...args]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    // Nothing half-registered.
    expect(await registered()).toEqual([]);
  });

  it('stores the secret only as a hash, never in plain text', async () => {
    const created = await createJson(['--name', 'Acme CRM', '--flow', 'client_credentials']);
    const secret = String(created['client_secret']);
    const bytes = storeBytes();
    expect(bytes.includes(Buffer.from(secret))).toBe(false);
    expect(bytes.includes(Buffer.from(String(created['client_id'])))).toBe(true);
  });
});

describe('oauth-admin clients list', () => {
  it('shows every integration in a table, never a secret or its hash', async () => {
    const first = await createJson(['--name', 'Acme CRM', '--flow', 'client_credentials', '--issued-at', '2020-06-01']);
    const second = await createJson(['--name', 'Mail Merge', '--flow', 'authorization_code', '--redirect-uri', 'https://mm.example/cb']);
    const result = await run(['clients', 'list']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CLIENT_ID +NAME +FLOW +ISSUED_AT +DISABLED +OLD_SECRET_UNTIL +REDIRECT_URIS$/);
    expect(lines).toHaveLength(3);
    expect(result.stdout).toContain(String(first['client_id']));
    expect(result.stdout).toMatch(/Acme CRM +client_credentials +2020-06-01 +no/);
    expect(result.stdout).toMatch(/Mail Merge +authorization_code +\d{4}-\d{2}-\d{2} +no +- +https:\/\/mm\.example\/cb/);
    for (const created of [first, second]) {
      const secret = String(created['client_secret']);
      expect(result.stdout).not.toContain(secret);
      expect(result.stdout).not.toContain(sha256(secret));
    }
  });

  it('--json prints an array without secrets or hashes', async () => {
    const created = await createJson(['--name', 'Acme CRM', '--flow', 'client_credentials']);
    const result = await run(['clients', 'list', '--json']);
    const list = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ client_id: created['client_id'], name: 'Acme CRM', disabled: false });
    expect(result.stdout).not.toContain(String(created['client_secret']));
    expect(result.stdout).not.toContain(sha256(String(created['client_secret'])));
    expect(list[0]).not.toHaveProperty('client_secret');
  });

  it('says so when there is nothing to list', async () => {
    await createEmptyStore();
    const result = await run(['clients', 'list']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/No integrations registered/);
  });
});

describe('oauth-admin clients rotate-secret', () => {
  it('issues a new secret whose hash replaces the old one', async () => {
    const created = await createJson(['--name', 'Acme CRM', '--flow', 'client_credentials']);
    const oldSecret = String(created['client_secret']);
    expect(storeBytes().includes(Buffer.from(sha256(oldSecret)))).toBe(true);

    const result = await run(['clients', 'rotate-secret', String(created['client_id']), '--json']);
    expect(result.code).toBe(0);
    const rotated = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(rotated['client_id']).toBe(created['client_id']);
    const newSecret = String(rotated['client_secret']);
    expect(newSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newSecret).not.toBe(oldSecret);

    // Read through a fresh process: the store now holds the new hash, not the old one, nor the secret.
    const { createSqliteStore } = await import('../../dist/stores/sqlite/index.js');
    const store = createSqliteStore({ filename: storeFile });
    try {
      const client = await store.clients.findClient(String(created['client_id']));
      expect(client?.clientSecretHash).toBe(sha256(newSecret));
    } finally {
      await store.close?.();
    }
    expect(storeBytes().includes(Buffer.from(newSecret))).toBe(false);
  });

  it('prints the new secret with the once-only warning', async () => {
    const created = await createJson(['--name', 'Acme CRM', '--flow', 'client_credentials']);
    const result = await run(['clients', 'rotate-secret', String(created['client_id'])]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/client_secret: +[A-Za-z0-9_-]{43}\n/);
    expect(result.stdout).toMatch(/shown only this once/);
  });

  it('exits 1 for an unknown client_id', async () => {
    await createEmptyStore();
    const result = await run(['clients', 'rotate-secret', 'no-such-client']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/unknown client_id "no-such-client"/);
  });

  it('exits 2 without a client_id', async () => {
    const result = await run(['clients', 'rotate-secret']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/missing required argument/);
  });
});

describe('oauth-admin clients disable', () => {
  it('marks the integration disabled', async () => {
    const created = await createJson(['--name', 'Acme CRM', '--flow', 'client_credentials']);
    const result = await run(['clients', 'disable', String(created['client_id'])]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Disabled/);
    const list = JSON.parse((await run(['clients', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(list[0]).toMatchObject({ client_id: created['client_id'], disabled: true });
    expect((await run(['clients', 'list'])).stdout).toMatch(/Acme CRM +client_credentials +\S+ +yes/);
  });

  it('exits 1 for an unknown client_id', async () => {
    await createEmptyStore();
    const result = await run(['clients', 'disable', 'no-such-client']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unknown client_id/);
  });
});

describe('oauth-admin usage', () => {
  it('exits 2 for an unknown command', async () => {
    const result = await run(['clients', 'delete', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toBe('');
  });

  it('runs as the bin npx links, straight from the build: dist/cli/main.js is executable after every npm run build', () => {
    // npx runs a checkout's own bin through a link made once; each build writes main.js anew, so its mode must come
    // from the build, or `npx --no -- oauth-admin` answers "Permission denied" after the next npm start.
    const main = resolve(import.meta.dirname, '../../dist/cli/main.js');
    expect(execFileSync(main, ['--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('exits 0 for --help', async () => {
    const result = await run(['clients', 'create', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/--redirect-uri/);
  });
});
