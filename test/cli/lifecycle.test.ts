// The integration lifecycle from the oauth-admin command, as an operator runs it: every step, wrong arguments, exit codes.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';

let dir: string;
let storeFile: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-lifecycle-'));
  storeFile = join(dir, 'oauth.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function run(...args: string[]): Promise<CliResult> {
  return runCli(storeFile, args);
}

/** Runs a command with --json that must succeed, and parses what it printed. */
async function json(...args: string[]): Promise<Record<string, unknown>> {
  const result = await run(...args, '--json');
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** Expects a --json failure with this exit code and stable error code; returns its message. */
async function fails(exitCode: number, error: string, ...args: string[]): Promise<string> {
  const result = await run(...args, '--json');
  expect(result.stdout).toBe('');
  expect(result.code).toBe(exitCode);
  const body = JSON.parse(result.stderr) as { error: string; message: string };
  expect(body.error).toBe(error);
  expect(body.message).not.toMatch(/\n\s+at /);
  return body.message;
}

async function createCodeClient(): Promise<string> {
  const created = await json('clients', 'create', '--name', 'Acme CRM', '--flow', 'authorization_code',
    '--redirect-uri', 'https://acme.example/cb', '--redirect-uri', 'https://acme.example/old', '--scope', 'envelopes:read', '--scope', 'envelopes:sign');
  return String(created['client_id']);
}

// A minute a case: each runs the CLI, a new Node process, up to twenty times; about a second a run on a loaded machine.
describe('oauth-admin lifecycle (RFC 6749 §2, RFC 7009 §2.1)', { timeout: 60_000 }, () => {
  it('create, show, update, rotate with a grace period, disable, enable, revoke and delete all succeed with exit 0', async () => {
    const id = await createCodeClient();
    const updated = await json('clients', 'update', id, '--name', 'Acme CRM 2', '--remove-redirect-uri', 'https://acme.example/old',
      '--add-redirect-uri', 'http://localhost:9000/cb', '--require-pkce', '--auth-method', 'client_secret_post');
    expect(updated).toMatchObject({
      client_id: id, name: 'Acme CRM 2', require_pkce: true, token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: ['https://acme.example/cb', 'http://localhost:9000/cb'], tokens_revoked: false,
    });
    expect(updated['updated_fields']).toEqual(['name', 'redirect_uris', 'require_pkce', 'token_endpoint_auth_method']);
    for (const field of updated['updated_fields'] as string[]) expect(updated, 'each a key of the same object').toHaveProperty(field);
    const narrowed = await json('clients', 'update', id, '--scope', 'envelopes:read', '--auth-method', 'any', '--no-require-pkce');
    expect(narrowed).toMatchObject({ scopes: ['envelopes:read'], require_pkce: false, tokens_revoked: true });
    expect(narrowed, 'present, null: any method').toHaveProperty('token_endpoint_auth_method', null);

    const rotated = await json('clients', 'rotate-secret', id, '--grace', '7d');
    expect(rotated['tokens_revoked']).toBe(false);
    const until = Date.parse(String(rotated['previous_secret_valid_until']));
    expect(until).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 7 * 86_400_000);
    expect((await json('clients', 'show', id))['previous_secret_valid_until']).toBe(rotated['previous_secret_valid_until']);
    const list = await run('clients', 'list');
    expect(list.stdout).toContain(String(rotated['previous_secret_valid_until']));
    const immediate = await json('clients', 'rotate-secret', id);
    expect(immediate).toMatchObject({ previous_secret_valid_until: null, tokens_revoked: true });
    expect(await json('clients', 'show', id), 'present, null, as in rotate-secret').toHaveProperty('previous_secret_valid_until', null);

    expect(await json('clients', 'disable', id)).toEqual({ client_id: id, disabled: true, already_disabled: false });
    expect(await json('clients', 'enable', id)).toEqual({ client_id: id, disabled: false, already_enabled: false });
    expect(await json('tokens', 'revoke', '--client', id)).toEqual({ extent: 'client', user_id: null, client_ids: [id] });
    expect(await json('tokens', 'revoke', '--client', id, '--user', 'user-1')).toEqual({ extent: 'user', user_id: 'user-1', client_ids: [id] });
    expect(await json('tokens', 'revoke', '--user', 'user-1')).toEqual({ extent: 'user', user_id: 'user-1', client_ids: [id] });

    expect(await json('clients', 'delete', id, '--yes')).toEqual({ client_id: id, deleted: true });
    await fails(1, 'unknown_client', 'clients', 'show', id);
    expect(await json('clients', 'list')).toEqual([]);
  });

  it('text output says what happened, without --json', async () => {
    const id = await createCodeClient();
    expect((await run('clients', 'update', id, '--name', 'Renamed')).stdout).toBe(`Updated ${id}: name.\n`);
    expect((await run('clients', 'update', id, '--name', 'Renamed')).stdout).toBe(`Nothing changed for ${id}: it already has these settings.\n`);
    expect(await json('clients', 'update', id, '--name', 'Renamed', '--scope', 'envelopes:sign', '--scope', 'envelopes:read'))
      .toMatchObject({ updated_fields: [], tokens_revoked: false });
    expect((await run('clients', 'rotate-secret', id, '--grace', '1h')).stdout).toMatch(/the old one keeps working until \d{4}-/);
    expect((await run('tokens', 'revoke', '--user', 'bob')).stdout).toBe('Revoked the tokens of user bob at 1 integration(s).\n');
    const deleted = await run('clients', 'delete', id, '--yes');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toContain(`Deleted ${id}`);
  });

  it('clients update: wrong arguments are usage errors (exit 2, usage_error) and change nothing', async () => {
    const id = await createCodeClient();
    const before = await json('clients', 'show', id);
    expect(await fails(2, 'usage_error', 'clients', 'update', id)).toContain('nothing to update');
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--redirect-uri', 'http://evil.example/cb')).toContain('https');
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--redirect-uri', 'https://*.example.com/cb')).toContain('match exactly');
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--redirect-uri', 'https://a.example/cb', '--add-redirect-uri', 'https://b.example/cb')).toContain('not both');
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--remove-redirect-uri', 'https://acme.example/cb', '--remove-redirect-uri', 'https://acme.example/old')).toContain('at least one redirect URI');
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--remove-redirect-uri', 'https://never.example/cb')).toContain('not a redirect URI');
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--scope', 'bad scope"')).toBeTruthy();
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--name', '   ')).toContain('name');
    expect(await fails(2, 'usage_error', 'clients', 'update', id, '--name', 'x\u001b]0;PWNED\u0007y')).toContain('control characters');
    await fails(2, 'usage_error', 'clients', 'update', id, '--auth-method', 'private_key_jwt');
    await fails(2, 'usage_error', 'clients', 'update', id, '--bogus');
    expect(await json('clients', 'show', id)).toEqual(before);
  });

  it('clients create, delete and rotate-secret: wrong arguments are usage errors (exit 2, usage_error) and change nothing', async () => {
    const id = await createCodeClient();
    const before = await json('clients', 'show', id);
    expect(await fails(2, 'usage_error', 'clients', 'delete', id)).toContain('--yes');
    await fails(2, 'usage_error', 'clients', 'delete');
    expect(await fails(2, 'usage_error', 'clients', 'create', '--name', 'two\nlines', '--flow', 'client_credentials')).toContain('control characters');
    expect(await fails(2, 'usage_error', 'clients', 'rotate-secret', id, '--grace', '31d')).toBe('--grace is at most 30 days (30d, 2592000 seconds)');
    expect(await fails(2, 'usage_error', 'clients', 'rotate-secret', id, '--grace', 'soon')).toContain('--grace');
    for (const none of ['0', '0s', '0d']) {
      expect(await fails(2, 'usage_error', 'clients', 'rotate-secret', id, '--grace', none)).toContain('leave --grace out');
    }
    expect(await json('clients', 'show', id)).toEqual(before);
    expect(await json('clients', 'list')).toHaveLength(1);
  });

  it('tokens revoke: wrong arguments are usage errors (exit 2, usage_error) and change nothing', async () => {
    const id = await createCodeClient();
    const before = await json('clients', 'show', id);
    expect(await fails(2, 'usage_error', 'tokens', 'revoke')).toContain('--client');
    // No signed-in user has such an id: refused, not written as a revocation at every integration.
    for (const user of ['a\u0001', 'u'.repeat(256)]) {
      expect(await fails(2, 'usage_error', 'tokens', 'revoke', '--user', user)).toContain('control characters');
    }
    expect(await json('clients', 'show', id)).toEqual(before);
  });

  it('an unknown client_id is exit 1, unknown_client, for every command that takes one', async () => {
    await createCodeClient();
    for (const args of [
      ['clients', 'update', 'nope', '--name', 'x'], ['clients', 'rotate-secret', 'nope'], ['clients', 'rotate-secret', 'nope', '--grace', '1d'],
      ['clients', 'delete', 'nope', '--yes'], ['tokens', 'revoke', '--client', 'nope'], ['tokens', 'revoke', '--client', 'nope', '--user', 'u'],
    ]) {
      expect(await fails(1, 'unknown_client', ...args)).toContain('nope');
    }
  });

  it('without a store every lifecycle command is exit 1, no_store, and creates none', async () => {
    await fails(1, 'no_store', 'clients', 'update', 'x', '--name', 'y');
    await fails(1, 'no_store', 'clients', 'delete', 'x', '--yes');
    await fails(1, 'no_store', 'tokens', 'revoke', '--user', 'u');
    expect(existsSync(storeFile)).toBe(false);
  });

  it('every lifecycle command has --help (exit 0) naming its options, and the program help documents the exit codes', async () => {
    for (const [args, option] of [
      [['clients', 'update'], '--remove-redirect-uri'], [['clients', 'rotate-secret'], '--grace'], [['clients', 'delete'], '--yes'],
      [['tokens', 'revoke'], '--user'], [['tokens'], 'revoke'],
    ] as const) {
      const help = await run(...args, '--help');
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(option);
      expect(help.stdout).toContain('--json');
    }
    const main = await run('--help');
    expect(main.stdout).toContain('Exit codes');
    expect(main.stdout).toContain('unsupported');
  });
});
