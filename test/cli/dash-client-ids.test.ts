// Client ids and the leading "-": generated ids never start with one, and existing ones stay manageable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';
import { createRandomClientId } from '../../src/crypto/random-client-id.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';

/**
 * Ids as an earlier version could generate them (43 base64url characters): a leading "-", and one that looks like
 * `-h`; and a short one, as `clients import` may bring from another server.
 */
const DASH_IDS = ['-Xy4bQ9v0mK1zR2tLw8sN3pD5gH7jF6cA0eU_uY-iOA', '-hq1W2e3R4t5Y6u7I8o9P0aSdFgHjKlZxCvBnM-_Q1w', '-partner-7'] as const;

let dir: string;
let storeFile: string;

function run(args: readonly string[]): Promise<CliResult> {
  return runCli(storeFile, args);
}

/** Opens the SQLite file the CLI uses, through the built package, for setup and for checks. */
async function withSqlite<T>(work: (store: import('../../src/stores/contract.js').Store) => Promise<T>): Promise<T> {
  const { createSqliteStore } = await import('../../dist/stores/sqlite/index.js');
  const store = createSqliteStore({ filename: storeFile });
  try {
    return await work(store);
  } finally {
    await store.close?.();
  }
}

/** The commands of the built CLI that take a client_id: the test covers each of them. */
async function idTakingCommands(): Promise<string[]> {
  const { createProgram } = await import('../../dist/cli/create-program.js');
  const clients = createProgram().commands.find((command) => command.name() === 'clients');
  return (clients?.commands ?? [])
    .filter((command) => command.registeredArguments.some((argument) => argument.name() === 'client_id'))
    .map((command) => command.name())
    .sort();
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-dash-'));
  storeFile = join(dir, 'oauth.sqlite');
  const { registerClient: registerBuilt } = await import('../../dist/index.js');
  await withSqlite(async (store) => {
    for (const clientId of DASH_IDS) {
      await registerBuilt(store, { name: `Legacy ${clientId.slice(0, 3)}`, flow: 'client_credentials', clientId });
    }
  });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('generated client_ids (RFC 6749 §2.2)', () => {
  it('redraws a value whose base64url starts with "-" instead of mapping it', () => {
    // 0xf8 = 111110xx: the first six bits are 62, base64url "-".
    const draws = [Buffer.alloc(32, 0xf8), Buffer.alloc(32, 0x0f)];
    const sizes: number[] = [];
    const id = createRandomClientId((size) => {
      sizes.push(size);
      return draws.shift() ?? Buffer.alloc(size);
    });
    expect(id).toBe(Buffer.alloc(32, 0x0f).toString('base64url'));
    expect(sizes).toEqual([32, 32]);
  });

  it('keeps a first draw that does not start with "-", unchanged: 256 bits, 43 base64url characters', () => {
    const bytes = Buffer.alloc(32, 0xfc); // first six bits 63, base64url "_"
    expect(createRandomClientId(() => bytes)).toBe(bytes.toString('base64url'));
    expect(createRandomClientId()).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{41}[AEIMQUYcgkosw048]$/);
  });

  it('fails loudly, rather than looping forever, on a source that only yields "-" ids', () => {
    expect(() => createRandomClientId(() => Buffer.alloc(32, 0xf8))).toThrow(/not random/);
  });

  it('registerClient never generates an id starting with "-" (2,000 ids, where 1 in 64 used to)', async () => {
    const store = createMemoryStore();
    const ids = new Set<string>();
    for (let i = 0; i < 2000; i += 1) {
      const { client } = await registerClient(store, { name: `Client ${i}`, flow: 'client_credentials' });
      ids.add(client.clientId);
    }
    expect(ids.size).toBe(2000);
    expect([...ids].filter((id) => id.startsWith('-'))).toEqual([]);
    expect([...ids].every((id) => /^[A-Za-z0-9_-]{43}$/.test(id))).toBe(true);
  });

  it('registerClient still accepts a chosen id that starts with "-"', async () => {
    const { client } = await registerClient(createMemoryStore(), { name: 'Legacy', flow: 'client_credentials', clientId: DASH_IDS[0] });
    expect(client.clientId).toBe(DASH_IDS[0]);
  });
});

describe('the commands that take a client_id', () => {
  it('are exactly the ones tested below (a new one must be added here)', async () => {
    expect(await idTakingCommands()).toEqual(['delete', 'disable', 'enable', 'rotate-secret', 'show', 'update']);
  });
});

describe.each(DASH_IDS)('oauth-admin with the existing client_id %s', (clientId) => {
  it('lists it as stored', async () => {
    const list = JSON.parse((await run(['clients', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(list.map((client) => client['client_id'])).toContain(clientId);
  });

  it('rotate-secret takes it after --', async () => {
    const result = await run(['clients', 'rotate-secret', '--json', '--', clientId]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rotated = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(rotated['client_id']).toBe(clientId);
    const hash = createHash('sha256').update(String(rotated['client_secret']), 'utf8').digest('base64url');
    const stored = await withSqlite((store) => store.clients.findClient(clientId));
    expect(stored?.clientSecretHash).toBe(hash);
  });

  it('update takes it after --', async () => {
    const result = await run(['clients', 'update', '--name', 'Renamed', '--json', '--', clientId]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((await withSqlite((store) => store.clients.findClient(clientId)))?.name).toBe('Renamed');
  });

  it('delete takes it after --', async () => {
    const result = await run(['clients', 'delete', '--yes', '--', clientId]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(await withSqlite((store) => store.clients.findClient(clientId))).toBeNull();
  });

  it('disable takes it after --', async () => {
    const result = await run(['clients', 'disable', '--', clientId]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Disabled ${clientId}`);
    const stored = await withSqlite((store) => store.clients.findClient(clientId));
    expect(stored?.disabled).toBe(true);
    // The other legacy integration is untouched.
    const other = DASH_IDS.find((id) => id !== clientId) ?? '';
    expect((await withSqlite((store) => store.clients.findClient(other)))?.disabled).toBe(false);
  });

  it('enable takes it after --', async () => {
    await withSqlite((store) => store.clients.updateClient?.(clientId, { disabled: true }) ?? Promise.resolve(null));
    const result = await run(['clients', 'enable', '--', clientId]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Enabled ${clientId}`);
    expect((await withSqlite((store) => store.clients.findClient(clientId)))?.disabled).toBe(false);
  });

  it('show takes it after --', async () => {
    const result = await run(['clients', 'show', '--json', '--', clientId]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ client_id: clientId, disabled: false });
  });

  it.each([
    ['disable', [], ''],
    ['enable', [], ''],
    ['show', [], ''],
    ['rotate-secret', [], ''],
    ['update', ['--name', 'Renamed'], ' --name Renamed'],
    ['delete', ['--yes'], ' --yes'],
  ])('%s without -- exits 2 and says what to type', async (command, options, typedOptions) => {
    const result = await run(['clients', command, clientId, ...options]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: unknown option '${clientId}'. If this is a client_id, put -- before it: ` +
        `oauth-admin clients ${command}${typedOptions} -- ${clientId}\n`,
    );
    // Nothing happened to the integration.
    expect((await withSqlite((store) => store.clients.findClient(clientId)))?.disabled).toBe(false);
  });
});

describe.each(['rotate-secret', 'disable'])('oauth-admin clients %s --json with a client_id starting with "-"', (command) => {
  it('answers the line to type in the JSON error, --json kept', async () => {
    const clientId = DASH_IDS[0];
    const result = await run(['clients', command, clientId, '--json']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({
      error: 'usage_error',
      message: `unknown option '${clientId}'. If this is a client_id, put -- before it: oauth-admin clients ${command} --json -- ${clientId}`,
    });
  });
});

describe('the unknown-option message', () => {
  it('stays as it was for an option that does not look like a client_id', async () => {
    const result = await run(['clients', 'disable', '--force', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("error: unknown option '--force'\n");
  });
});
