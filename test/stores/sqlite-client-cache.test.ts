// The SQLite store's in-process copies of integrations are exactly what its SELECT would answer at that moment.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';

let dir: string;
let file: string;
let stores: SqliteStore[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-clients-'));
  file = join(dir, 'oauth.sqlite');
  stores = [];
});

afterEach(async () => {
  for (const store of stores) await store.close?.();
  rmSync(dir, { recursive: true, force: true });
});

function open(): SqliteStore {
  const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  stores.push(store);
  return store;
}

/** Counts the SELECTs of `clients` that a connection runs, through SQLite's own statement trace. */
function countingSelects(): { db: Database.Database; count: () => number } {
  let selects = 0;
  const db = new Database(file, { verbose: (sql) => { if (String(sql).startsWith('SELECT * FROM clients WHERE')) selects += 1; } });
  return { db, count: () => selects };
}

describe('SQLite store: findClient from in-process copies (issue 10)', () => {
  it('answers a known integration again without a SELECT while nothing changed', async () => {
    open();
    const { db, count } = countingSelects();
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0 });
    stores.push(store);
    const { client } = buildClient();
    await store.clients.createClient!(client);
    await nextTurn();
    expect((await store.clients.findClient(client.clientId))?.clientId).toBe(client.clientId);
    const after = count();
    for (let i = 0; i < 3; i += 1) {
      await nextTurn();
      expect(await store.clients.findClient(client.clientId)).toEqual(client);
    }
    expect(count(), 'served from the copy').toBe(after);
    await store.close?.();
    db.close();
  });

  it('sees a change committed by another connection (the CLI, another process) at once, within the same turn', async () => {
    const app = open();
    const cli = open();
    const { client } = buildClient();
    await app.clients.createClient!(client);
    await nextTurn();
    // A token request takes its startedAt before it reads the integration: the copy must not be older.
    expect((await app.clients.findClient(client.clientId))?.disabled).toBe(false);
    await cli.clients.updateClient!(client.clientId, { disabled: true });
    expect((await app.clients.findClient(client.clientId))?.disabled).toBe(true);
  });

  it('sees a rotated secret and a deletion by another connection at once', async () => {
    const app = open();
    const cli = open();
    const { client } = buildClient();
    await app.clients.createClient!(client);
    await app.clients.findClient(client.clientId);
    await cli.clients.updateClient!(client.clientId, { clientSecretHash: 'rotated-hash' });
    expect((await app.clients.findClient(client.clientId))?.clientSecretHash).toBe('rotated-hash');
    await cli.clients.deleteClient!(client.clientId);
    expect(await app.clients.findClient(client.clientId)).toBeNull();
  });

  it("sees its own connection's writes at once, in the same turn", async () => {
    const app = open();
    const { client } = buildClient();
    await app.clients.createClient!(client);
    await app.clients.findClient(client.clientId);
    await app.clients.updateClient!(client.clientId, { name: 'Renamed', allowedScopes: ['envelopes:read'] });
    const found = await app.clients.findClient(client.clientId);
    expect(found?.name).toBe('Renamed');
    expect(found?.allowedScopes).toEqual(['envelopes:read']);
    await app.clients.deleteClient!(client.clientId);
    expect(await app.clients.findClient(client.clientId)).toBeNull();
  });

  it('keeps no copy of an unknown id: an integration created elsewhere is found at once', async () => {
    const app = open();
    const cli = open();
    const { client } = buildClient();
    expect(await app.clients.findClient(client.clientId)).toBeNull();
    await cli.clients.createClient!(client);
    expect(await app.clients.findClient(client.clientId)).toEqual(client);
  });

  it('gives each caller its own object: editing an answer changes no later one', async () => {
    const app = open();
    const { client } = buildClient({ redirectUris: ['https://app.example.com/cb'] });
    await app.clients.createClient!(client);
    const first = await app.clients.findClient(client.clientId);
    (first!.redirectUris as string[]).push('https://evil.example.com/cb');
    expect((await app.clients.findClient(client.clientId))?.redirectUris).toEqual(['https://app.example.com/cb']);
  });
});
