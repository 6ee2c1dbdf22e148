// Integration copies past their bound forget the oldest integration, not all of them (a deployment's integrations grow).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { authenticateClient } from '../../src/checks/client-auth.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import type { Store } from '../../src/stores/contract.js';

/** The copies' bound (revision-copies.ts, sqlite/client-copies.ts): one integration more than it. */
const BOUND = 10_000;
const INTEGRATIONS = BOUND + 1;

let dir: string;
let stores: SqliteStore[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-copies-bound-'));
  stores = [];
});
afterEach(async () => {
  for (const store of stores) await store.close?.();
  rmSync(dir, { recursive: true, force: true });
});

/** A SQLite store on a connection whose SELECTs of `clients` are counted, holding INTEGRATIONS client_credentials integrations. */
async function openWithIntegrations(): Promise<{ store: SqliteStore; selects: () => number; ids: string[]; secrets: string[] }> {
  const file = join(dir, 'oauth.sqlite');
  let selects = 0;
  const db = new Database(file, { verbose: (sql) => { if (String(sql).startsWith('SELECT * FROM clients WHERE')) selects += 1; } });
  const store = createSqliteStore(db, { sweepIntervalSeconds: 0 });
  stores.push(store);
  const ids: string[] = [];
  const secrets: string[] = [];
  const saves: Promise<boolean>[] = [];
  for (let i = 0; i < INTEGRATIONS; i += 1) {
    const { client, secret } = buildClient({ flow: 'client_credentials', redirectUris: [], allowedScopes: ['envelopes:read'] });
    ids.push(client.clientId);
    secrets.push(secret);
    saves.push(store.clients.createClient!(client));
  }
  expect((await Promise.all(saves)).every(Boolean)).toBe(true);
  return { store, selects: () => selects, ids, secrets };
}

/** `store` with its `findClient` calls counted (bench/counting-store.js's wrapper, for one method). */
function countingFindClient(store: Store): { store: Store; calls: () => number } {
  let calls = 0;
  const clients = { ...store.clients, findClient: (id: string) => { calls += 1; return store.clients.findClient(id); } };
  return { store: { ...store, clients }, calls: () => calls };
}

const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

describe('integration copies past their bound (issue 10: as integrations grow)', () => {
  it('the token endpoint, one integration past the bound, still authenticates the others from copies', async () => {
    const { store, ids, secrets } = await openWithIntegrations();
    const counted = countingFindClient(store);
    const authenticate = (i: number) => authenticateClient(counted.store, basic(ids[i]!, secrets[i]!), new Map(), ['client_secret_basic'], true);
    for (let i = 0; i < INTEGRATIONS; i += 1) await authenticate(i);
    expect(counted.calls(), 'each integration read once').toBe(INTEGRATIONS);
    // Every integration but the oldest is still kept: none of them is read again. Starting over at the bound read
    // all of them again (and, with requests from a random one of 20,000, 88 % of requests read their integration).
    for (let i = 1; i < INTEGRATIONS; i += 1) await authenticate(i);
    expect(counted.calls() - INTEGRATIONS, 'integrations read again').toBe(0);
  }, 120_000);

  it("the SQLite store's findClient, one integration past the bound, answers the others without a SELECT", async () => {
    const { store, selects, ids } = await openWithIntegrations();
    for (const id of ids) expect((await store.clients.findClient(id))?.clientId).toBe(id);
    const after = selects();
    for (const id of ids.slice(1)) await store.clients.findClient(id);
    expect(selects() - after, 'SELECTs of integrations read before').toBe(0);
  }, 120_000);
});
