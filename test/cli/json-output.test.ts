// oauth-admin for scripts and people: --json on every command, JSON errors, exit codes, --version, --help.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import type { CliErrorCode } from '../../src/cli/cli-error.js';

/** Every leaf command, with arguments that make it succeed; `ID` stands for a registered client_id. */
const COMMANDS: Readonly<Record<string, readonly string[]>> = {
  create: ['--name', 'Acme CRM', '--flow', 'client_credentials'],
  list: [],
  show: ['ID'],
  'rotate-secret': ['ID'],
  disable: ['ID'],
  enable: ['ID'],
  update: ['ID', '--name', 'Renamed'],
  delete: ['ID', '--yes'],
  import: ['FILE'],
};

/** Every `error` of a --json error; a Record over the type, so a code added to `CliErrorCode` must be added here. */
const ERROR_CODES: Readonly<Record<CliErrorCode, true>> = {
  usage_error: true, unknown_client: true, no_store: true, store_unavailable: true, unsupported: true,
  grace_period_running: true, revocation_incomplete: true, replacement_incomplete: true, clock_skew: true, failure: true,
};

const PACKAGE_VERSION = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version;

let dir: string;
let storeFile: string;
let clientId: string;
let importFile: string;

function run(args: readonly string[]): Promise<CliResult> {
  return runCli(storeFile, args);
}

/** The arguments of `clients COMMAND`, `ID` replaced by the registered client_id and `FILE` by the import file. */
function argsFor(command: string): string[] {
  return (COMMANDS[command] ?? []).map((arg) => (arg === 'ID' ? clientId : arg === 'FILE' ? importFile : arg));
}

/** Runs `clients COMMAND` with its arguments. */
function runCommand(command: string, extra: readonly string[], before: readonly string[] = []): Promise<CliResult> {
  return run([...before, 'clients', command, ...argsFor(command), ...extra]);
}

/** The JSON error on stderr: exactly `error` and `message`, nothing on stdout. */
function jsonError(result: CliResult): { error: string; message: string } {
  expect(result.stdout).toBe('');
  const parsed = JSON.parse(result.stderr) as Record<string, unknown>;
  expect(Object.keys(parsed).sort()).toEqual(['error', 'message']);
  expect(typeof parsed['message']).toBe('string');
  return parsed as { error: string; message: string };
}

/** The commands of the built program, with their descriptions: the tests below cover each one. */
async function builtCommands(): Promise<Map<string, string>> {
  const { createProgram } = await import('../../dist/cli/create-program.js');
  const clients = createProgram().commands.find((command) => command.name() === 'clients');
  return new Map((clients?.commands ?? []).map((command) => [command.name(), command.description()]));
}

/** Registers the integration the commands act on (again, after a delete). */
async function recreate(): Promise<void> {
  const created = await run(['clients', 'create', '--name', 'Existing', '--flow', 'client_credentials', '--json']);
  expect(created.code).toBe(0);
  clientId = String((JSON.parse(created.stdout) as Record<string, unknown>)['client_id']);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-json-'));
  storeFile = join(dir, 'oauth.sqlite');
  importFile = join(dir, 'import.jsonl');
  writeFileSync(importFile, `${JSON.stringify({
    client_id: 'imported-crm', client_secret_hash: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg', name: 'Imported CRM',
    flow: 'client_credentials', credentials_issued_at: '2020-06-01T00:00:00Z',
  })}\n`);
  await recreate();
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the commands under test', () => {
  it('are exactly the commands of oauth-admin clients (a new one must be added here)', async () => {
    expect([...(await builtCommands()).keys()].sort()).toEqual(Object.keys(COMMANDS).sort());
  });
});

describe('--json on every command prints one JSON document on stdout', () => {
  it('create: the registration and its secret', async () => {
    const result = await runCommand('create', ['--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const created = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(created).toMatchObject({ name: 'Acme CRM', flow: 'client_credentials', disabled: false });
    expect(created['client_secret']).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('list: an array of registrations', async () => {
    const result = await runCommand('list', ['--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual([expect.objectContaining({ client_id: clientId, name: 'Existing' })]);
  });

  it('show: the registration, without secret or hash', async () => {
    const result = await runCommand('show', ['--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const shown = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({ client_id: clientId, name: 'Existing', flow: 'client_credentials', disabled: false });
    expect(Object.keys(shown).filter((key) => /secret/.test(key)), 'only the grace period\'s end').toEqual(['previous_secret_valid_until']);
    expect(shown['previous_secret_valid_until']).toBeNull();
  });

  it('rotate-secret: the client_id and the new secret', async () => {
    const result = await runCommand('rotate-secret', ['--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      client_id: clientId, client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), previous_secret_valid_until: null, tokens_revoked: true,
    });
  });

  it('update: the integration as updated, the fields written and whether tokens were revoked', async () => {
    const result = await runCommand('update', ['--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({ client_id: clientId, name: 'Renamed', updated_fields: ['name'], tokens_revoked: false });
  });

  it('delete: the client_id and deleted: true', async () => {
    const result = await runCommand('delete', ['--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({ client_id: clientId, deleted: true });
  });

  it('disable and enable: the client_id and its new state', async () => {
    const disabled = await runCommand('disable', ['--json']);
    expect(disabled).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(disabled.stdout)).toEqual({ client_id: clientId, disabled: true, already_disabled: false });
    const enabled = await runCommand('enable', ['--json']);
    expect(enabled).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(enabled.stdout)).toEqual({ client_id: clientId, disabled: false, already_enabled: false });
  });

  it.each(Object.keys(COMMANDS))('%s: --json given before the command means the same', async (command) => {
    for (const before of [['--json'], ['clients', '--json']]) {
      const args = argsFor(command);
      const result = await run(before[0] === 'clients' ? [...before, command, ...args] : [...before, 'clients', command, ...args]);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      // A deleted integration cannot be deleted twice: register the id again for the next round.
      if (command === 'delete') await recreate();
      expect(() => JSON.parse(result.stdout) as unknown).not.toThrow();
    }
  });
});

describe('with --json, errors are one {"error", "message"} object on stderr', () => {
  it.each(['show', 'rotate-secret', 'disable', 'enable', 'update', 'delete'])('%s of an unknown client_id: unknown_client, exit 1', async (command) => {
    const extra = command === 'update' ? ['--name', 'X'] : command === 'delete' ? ['--yes'] : [];
    const result = await run(['clients', command, 'no-such-client', ...extra, '--json']);
    expect(result.code).toBe(1);
    expect(jsonError(result)).toEqual({ error: 'unknown_client', message: 'unknown client_id "no-such-client"' });
  });

  it.each(Object.keys(COMMANDS))('%s with an unknown option: usage_error, exit 2', async (command) => {
    const result = await runCommand(command, ['--colour', 'red', '--json']);
    expect(result.code).toBe(2);
    expect(jsonError(result)).toEqual({ error: 'usage_error', message: "unknown option '--colour'" });
  });

  it.each([
    ['an unknown command', ['clients', 'purge', 'x'], /unknown command 'purge'/],
    ['a missing client_id', ['clients', 'disable'], /missing required argument 'client_id'/],
    ['a missing command', ['clients'], /a command is required/],
    ['a malformed --issued-at', ['clients', 'create', '--name', 'X', '--flow', 'client_credentials', '--issued-at', '2021-02-30'], /--issued-at must be a date/],
    ['an --issued-at in the future', ['clients', 'create', '--name', 'X', '--flow', 'client_credentials', '--issued-at', '2099-01-01'], /is in the future/],
    ['an invalid registration', ['clients', 'create', '--name', 'X', '--flow', 'authorization_code'], /redirect URI/],
  ])('%s: usage_error, exit 2', async (_label, args, message) => {
    const result = await run([...args, '--json']);
    expect(result.code).toBe(2);
    const error = jsonError(result);
    expect(error.error).toBe('usage_error');
    expect(error.message).toMatch(message);
  });

  it('an unsupported store URL: usage_error, exit 2', async () => {
    const { runCliWith } = await import('../helpers/run-cli.js');
    const result = await runCliWith(['clients', 'list', '--json'], { env: { ...process.env, OAUTH_STORE: 'mongodb://x' } });
    expect(result.code).toBe(2);
    expect(jsonError(result)).toMatchObject({ error: 'usage_error', message: expect.stringMatching(/unsupported store scheme/) });
  });

  it('an argument after -- is never read as --json', async () => {
    const result = await run(['clients', 'show', '--', '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('oauth-admin: unknown client_id "--json"\n');
  });
});

describe('without --json, errors are text', () => {
  it.each(Object.keys(COMMANDS))('%s with an unknown option: commander\'s message, exit 2', async (command) => {
    const result = await runCommand(command, ['--colour', 'red']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe("error: unknown option '--colour'\n");
  });

  it('a mistyped option is answered with the right spelling', async () => {
    const result = await run(['clients', 'list', '--jsn']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown option '--jsn'\n\(Did you mean --json\?\)/);
  });
});

describe('oauth-admin --version', () => {
  it.each([['--version'], ['-V']])('%s prints the version of the installed package.json', async (flag) => {
    const result = await run([flag]);
    expect(result).toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
  });

  it.each([[['--version', '--json']], [['--json', '--version']]])('%j prints {"version": …}', async (args) => {
    const result = await run(args);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ version: PACKAGE_VERSION });
  });
});

describe('--help', () => {
  it.each(Object.keys(COMMANDS))('clients %s --help says what it does and lists --json', async (command) => {
    const description = (await builtCommands()).get(command) ?? '';
    expect(description.length).toBeGreaterThan(20);
    const result = await run(['clients', command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout.replace(/\s+/g, ' ')).toContain(description);
    expect(result.stdout).toMatch(/--json/);
  });

  it('clients --help lists every command with what it does', async () => {
    const result = await run(['clients', '--help']);
    expect(result.code).toBe(0);
    for (const command of Object.keys(COMMANDS)) expect(result.stdout).toMatch(new RegExp(`\\n  ${command} `));
  });

  it('oauth-admin --help documents --version, --json, the JSON error shape and the exit codes', async () => {
    const result = await run(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/-V, --version/);
    expect(result.stdout).toMatch(/\{"error": CODE, "message": TEXT\}/);
    expect(result.stdout).toMatch(/Exit codes: 0 done; 1 failure .*; 2 usage error/);
  });

  it('oauth-admin --help names every error code a --json error carries, in the CODE list and under its exit code', async () => {
    const result = await run(['--help']);
    const codeList = /CODE: ([^\n]*)/.exec(result.stdout)?.[1] ?? '';
    const exitCodes = result.stdout.slice(result.stdout.indexOf('Exit codes:'));
    for (const code of Object.keys(ERROR_CODES)) {
      expect(codeList).toContain(code);
      expect(exitCodes).toContain(code);
    }
  });
});
