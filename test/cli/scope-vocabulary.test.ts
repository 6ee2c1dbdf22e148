// `oauth-admin` with OAUTH_SCOPES (the router's `scopes` option's keys): create, update and import refuse a scope
// outside it, as RFC 7591 §3.2.2 refuses client metadata the server does not support (invalid_client_metadata).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliWith, type CliResult } from '../helpers/run-cli.js';

const VOCABULARY = 'envelopes:read envelopes:sign';

let dir: string;
let storeFile: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-scopes-'));
  storeFile = join(dir, 'oauth.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `oauth-admin ARGS --json` on the test's store, with OAUTH_SCOPES set to `scopes` (left out when undefined). */
function run(scopes: string | undefined, ...args: string[]): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, OAUTH_STORE: `sqlite:${storeFile}` };
  delete env['OAUTH_SCOPES'];
  if (scopes !== undefined) env['OAUTH_SCOPES'] = scopes;
  return runCliWith([...args, '--json'], { env });
}

/** A usage error (exit 2) on stderr as one JSON object; returns its message. */
function usageError(result: CliResult): string {
  expect(result.stdout).toBe('');
  expect(result.code).toBe(2);
  const body = JSON.parse(result.stderr) as { error: string; message: string };
  expect(body.error).toBe('usage_error');
  return body.message;
}

async function created(result: Promise<CliResult>): Promise<Record<string, unknown>> {
  const done = await result;
  expect(done.stderr).toBe('');
  expect(done.code).toBe(0);
  return JSON.parse(done.stdout) as Record<string, unknown>;
}

describe('oauth-admin checks scopes against OAUTH_SCOPES (RFC 7591 §3.2.2)', () => {
  it('create refuses a scope outside OAUTH_SCOPES, naming it, and creates no store', async () => {
    const message = usageError(await run(VOCABULARY, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials',
      '--scope', 'envelopes:read', '--scope', 'envelopes:raed'));
    expect(message).toMatch(/"envelopes:raed".*envelopes:read envelopes:sign.*invalid_client_metadata/);
    expect(existsSync(storeFile)).toBe(false);
    const client = await created(run(VOCABULARY, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials', '--scope', 'envelopes:sign'));
    expect(client['scopes']).toEqual(['envelopes:sign']);
  });

  it('update refuses one, and the integration keeps its scopes', async () => {
    const client = await created(run(VOCABULARY, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials', '--scope', 'envelopes:read'));
    const id = String(client['client_id']);
    expect(usageError(await run(VOCABULARY, 'clients', 'update', id, '--scope', 'admin'))).toMatch(/"admin".*invalid_client_metadata/);
    expect((await created(run(VOCABULARY, 'clients', 'show', id)))['scopes']).toEqual(['envelopes:read']);
  });

  it('import refuses the file whose row has one, and writes nothing', async () => {
    const file = join(dir, 'integrations.jsonl');
    writeFileSync(file, `${JSON.stringify({
      client_id: 'partner-7', client_secret: 'a-secret-of-32-characters-000000', name: 'Partner 7', flow: 'client_credentials',
      scopes: ['envelopes:read', 'admin'], credentials_issued_at: '2019-03-01',
    })}\n`);
    const result = await run(VOCABULARY, 'clients', 'import', file);
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as { refused: boolean; rows: { outcome: string; message: string }[] };
    expect(report.refused).toBe(true);
    expect(report.rows[0]).toMatchObject({ outcome: 'invalid', message: expect.stringMatching(/invalid_client_metadata/) });
    expect((await created(run(undefined, 'clients', 'import', file, '--dry-run')))['refused'], 'without OAUTH_SCOPES, as before').toBe(false);
  });

  it('without OAUTH_SCOPES any scope-token is accepted, as before (the CLI does not know the router\'s options)', async () => {
    const client = await created(run(undefined, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials', '--scope', 'admin'));
    expect(client['scopes']).toEqual(['admin']);
    expect((await created(run('', 'clients', 'update', String(client['client_id']), '--scope', 'anything')))['scopes']).toEqual(['anything']);
  });

  it('a malformed OAUTH_SCOPES is a usage error naming it, before anything is written', async () => {
    const message = usageError(await run('envelopes:read "quoted"', 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials'));
    expect(message).toMatch(/OAUTH_SCOPES/);
    expect(existsSync(storeFile)).toBe(false);
  });

  it('a malformed OAUTH_SCOPES does not stop a command that registers no scope: revoke, disable, enable, rotate, delete', async () => {
    // An env file that keeps the quotes (docker --env-file) makes the value malformed; an incident's revocation must still run.
    const client = await created(run(undefined, 'clients', 'create', '--name', 'Acme', '--flow', 'client_credentials'));
    const id = String(client['client_id']);
    const quoted = `"${VOCABULARY}"`;
    for (const args of [['tokens', 'revoke', '--client', id], ['clients', 'disable', id], ['clients', 'enable', id],
      ['clients', 'rotate-secret', id], ['clients', 'update', id, '--name', 'Acme CRM']]) {
      const result = await run(quoted, ...args);
      expect(result.stderr, args.join(' ')).toBe('');
      expect(result.code, args.join(' ')).toBe(0);
    }
    expect((await run(quoted, 'clients', 'delete', id, '--yes')).code).toBe(0);
    expect(usageError(await run(quoted, 'clients', 'update', id, '--scope', 'envelopes:read')), 'a scope given: checked').toMatch(/OAUTH_SCOPES/);
  });
});
