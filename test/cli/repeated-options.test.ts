// oauth-admin refuses a command line that says two things at once, and a setting the integration's flow cannot keep.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';

let dir: string;
let storeFile: string;

function run(args: readonly string[]): Promise<CliResult> {
  return runCli(storeFile, args);
}

async function created(args: readonly string[]): Promise<Record<string, unknown>> {
  const result = await run(['clients', 'create', ...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function show(clientId: string): Promise<Record<string, unknown>> {
  const result = await run(['clients', 'show', clientId, '--json']);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-repeated-'));
  storeFile = join(dir, 'oauth.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('a single-valued option given twice is a usage error, and nothing is done', () => {
  it('clients create --name A --name B: exit 2, and no store is created', async () => {
    const result = await run(['clients', 'create', '--name', 'Acme Ltd', '--name', 'Acme', '--flow', 'client_credentials', '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({ error: 'usage_error', message: '--name was given twice: give it once' });
    expect(result.stdout).toBe('');
    expect((await run(['clients', 'list', '--json'])).code).toBe(1);
  });

  it('clients update --name twice, --auth-method twice, rotate-secret --grace twice: exit 2, the integration unchanged', async () => {
    const client = await created(['--name', 'Acme', '--flow', 'client_credentials']);
    const id = client['client_id'] as string;
    const before = await show(id);
    for (const args of [
      ['clients', 'update', id, '--name', 'One', '--name', 'Two'],
      ['clients', 'update', id, '--auth-method', 'any', '--auth-method', 'client_secret_basic'],
      ['clients', 'rotate-secret', id, '--grace', '1h', '--grace', '2h'],
    ]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^oauth-admin: --(name|auth-method|grace) was given twice: give it once\n$/);
    }
    expect(await show(id)).toEqual(before);
  });

  it('the same value given twice is refused too: the rule is about the command line, not the values', async () => {
    const result = await run(['clients', 'create', '--name', 'Acme', '--name', 'Acme', '--flow', 'client_credentials']);
    expect(result.code).toBe(2);
  });
});

describe('a flag given with its negation is a usage error', () => {
  it('clients update --require-pkce --no-require-pkce, in either order: exit 2, PKCE as it was', async () => {
    const client = await created(['--name', 'Web', '--flow', 'authorization_code', '--redirect-uri', 'https://web.example/cb']);
    const id = client['client_id'] as string;
    for (const flags of [['--require-pkce', '--no-require-pkce'], ['--no-require-pkce', '--require-pkce']]) {
      const result = await run(['clients', 'update', id, ...flags, '--json']);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stderr)).toEqual({ error: 'usage_error', message: `${flags[0]} and ${flags[1]} contradict each other: give one` });
    }
    expect((await show(id))['require_pkce']).toBe(false);
  });
});

describe('what stays accepted', () => {
  it('repeatable options (--redirect-uri, --scope) collect every value, and a flag given twice (--json --json) is the flag', async () => {
    const client = await created([
      '--name', 'Web', '--flow', 'authorization_code', '--redirect-uri', 'https://web.example/a', '--redirect-uri', 'https://web.example/b',
      '--scope', 'envelopes:read', '--scope', 'envelopes:write', '--require-pkce', '--require-pkce', '--json',
    ]);
    expect(client['redirect_uris']).toEqual(['https://web.example/a', 'https://web.example/b']);
    expect(client['scopes']).toEqual(['envelopes:read', 'envelopes:write']);
    expect(client['require_pkce']).toBe(true);
  });

  it('--json given to the program and to the command is one --json', async () => {
    const result = await run(['--json', 'clients', '--json', 'create', '--name', 'A', '--flow', 'client_credentials', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'A' });
  });
});

describe('RFC 7636 §1: PKCE belongs to the authorization request, which a client_credentials integration never makes', () => {
  it('clients create --flow client_credentials --require-pkce: exit 2, nothing registered', async () => {
    const result = await run(['clients', 'create', '--name', 'Batch', '--flow', 'client_credentials', '--require-pkce', '--json']);
    expect(result.code).toBe(2);
    // Said in the command line's words: the option typed, not the admin API's field.
    expect(JSON.parse(result.stderr)).toMatchObject({ error: 'usage_error', message: expect.stringMatching(/^--require-pkce applies to the authorization_code flow only/) });
    expect((await run(['clients', 'list', '--json'])).code).toBe(1);
  });

  it('clients update CC_ID --require-pkce: exit 2, unchanged; --no-require-pkce changes nothing and is accepted', async () => {
    const client = await created(['--name', 'Batch', '--flow', 'client_credentials']);
    const id = client['client_id'] as string;
    const refused = await run(['clients', 'update', id, '--require-pkce']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('authorization_code flow only');
    expect((await show(id))['require_pkce']).toBe(false);
    const off = await run(['clients', 'update', id, '--no-require-pkce', '--json']);
    expect(off.code).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ updated_fields: [] });
  });

  it('clients import: a client_credentials row with require_pkce true is invalid, and the file is refused', async () => {
    const file = join(dir, 'partners.jsonl');
    writeFileSync(file, [
      '{"client_id":"batch-1","client_secret":"s3cret-one","name":"Batch","flow":"client_credentials","credentials_issued_at":"2020-12-01","require_pkce":true}',
      '{"client_id":"batch-2","client_secret":"s3cret-two","name":"Batch 2","flow":"client_credentials","credentials_issued_at":"2020-12-01","require_pkce":false}',
    ].join('\n'));
    const result = await run(['clients', 'import', file, '--json']);
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as { refused: boolean; rows: { client_id: string; outcome: string; message?: string }[] };
    expect(report.refused).toBe(true);
    expect(report.rows).toEqual([
      { line: 1, client_id: 'batch-1', outcome: 'invalid', message: expect.stringMatching(/^require_pkce applies to the authorization_code flow only/) },
      expect.objectContaining({ line: 2, client_id: 'batch-2', outcome: 'would_create' }),
    ]);
  });
});

describe('usage errors name the options typed, not the admin API fields', () => {
  it('update without options, a replacement with an edit, --grace out of range, tokens revoke without a target', async () => {
    const client = await created(['--name', 'Web', '--flow', 'authorization_code', '--redirect-uri', 'https://web.example/cb']);
    const id = client['client_id'] as string;
    const said = async (args: readonly string[]): Promise<string> => {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      return result.stderr;
    };
    expect(await said(['clients', 'update', id])).toBe('oauth-admin: nothing to update: give at least one option\n');
    expect(await said(['clients', 'update', id, '--redirect-uri', 'https://a.example/cb', '--add-redirect-uri', 'https://b.example/cb']))
      .toBe('oauth-admin: give either --redirect-uri (a replacement) or --add-redirect-uri/--remove-redirect-uri, not both\n');
    expect(await said(['clients', 'rotate-secret', id, '--grace', '999d'])).toBe('oauth-admin: --grace is at most 30 days (30d, 2592000 seconds)\n');
    expect(await said(['tokens', 'revoke'])).toBe('oauth-admin: give --client, --user, or both\n');
  });
});
