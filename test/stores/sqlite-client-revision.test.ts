// SQLite schema version 8: every write of an integration, by any writer, moves its revision, and a stale copy saves nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateSqliteSchema } from '../../src/stores/sqlite/schema.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { buildClient, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';

let dir: string;
let file: string;
const opened: { close(): unknown }[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-v8-'));
  file = join(dir, 'oauth.sqlite');
});

afterEach(async () => {
  for (const handle of opened.splice(0).reverse()) await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(): SqliteStore {
  const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  opened.push(store);
  return store;
}

/** A connection of its own: the CLI of a previous version, or a DBA's shell, which know nothing of revisions. */
function raw(): Database.Database {
  const db = new Database(file);
  opened.push(db);
  return db;
}

/** The revision the store's copy holds after a lookup. */
async function copiedRevision(store: SqliteStore, clientId: string): Promise<string> {
  await store.clients.findClient(clientId);
  const copy = store.clientCopies.find(clientId);
  expect(copy, 'a lookup keeps a copy').toBeDefined();
  return copy!.revision;
}

/** Saves a token pair of the integration as a request served from a copy at `revision` would. */
async function saveAt(store: SqliteStore, clientId: string, revision: string): Promise<boolean> {
  const { access, refresh } = buildTokenPair({ clientId });
  return store.tokens.saveTokens(access, refresh, { authorizedAt: new Date(), clientRevision: revision });
}

describe('SQLite store: integration revisions for the token endpoint\'s copies (issue 10; RFC 6749 §2.3.1)', () => {
  it('a save at the copy\'s revision is kept; after any UPDATE by another connection it is refused', async () => {
    const store = open();
    const { client } = buildClient();
    await store.clients.createClient!(client);
    const revision = await copiedRevision(store, client.clientId);
    expect(await saveAt(store, client.clientId, revision)).toBe(true);
    raw().prepare('UPDATE clients SET name = ? WHERE client_id = ?').run('Renamed by hand', client.clientId);
    expect(await saveAt(store, client.clientId, revision), 'the stale copy saves nothing').toBe(false);
    expect(await saveAt(store, client.clientId, await copiedRevision(store, client.clientId))).toBe(true);
  });

  it('an UPDATE that writes the same values still moves the revision', async () => {
    const store = open();
    const { client } = buildClient();
    await store.clients.createClient!(client);
    const revision = await copiedRevision(store, client.clientId);
    raw().prepare('UPDATE clients SET disabled = disabled WHERE client_id = ?').run(client.clientId);
    expect(await saveAt(store, client.clientId, revision)).toBe(false);
  });

  it('an integration deleted and registered again under its id never gets back the revision of a copy of the first', async () => {
    const store = open();
    const { client } = buildClient();
    await store.clients.createClient!(client);
    const first = await copiedRevision(store, client.clientId);
    const other = open();
    await other.clients.deleteClient!(client.clientId);
    expect(await saveAt(store, client.clientId, first), 'gone: refused').toBe(false);
    await other.clients.createClient!({ ...client, clientSecretHash: hashSecret('the new registration') });
    expect(await saveAt(store, client.clientId, first), 'the copy of the deleted one').toBe(false);
    expect(await copiedRevision(store, client.clientId)).not.toBe(first);
  });

  it('a revision this store never gave is refused, whatever the stored one', async () => {
    const store = open();
    const { client } = buildClient();
    await store.clients.createClient!(client);
    const revision = await copiedRevision(store, client.clientId);
    for (const given of ['', ' 1', `${revision}.0`, '0x1', '-1', '99999999999999999', 'NaN']) {
      expect(await saveAt(store, client.clientId, given), JSON.stringify(given)).toBe(false);
    }
    expect(await saveAt(store, client.clientId, revision)).toBe(true);
  });

  it('a file migrated from version 7 keeps its integrations at revision 0 until their first change', async () => {
    const db = raw();
    migrateSqliteSchema(db, 7);
    db.prepare(`INSERT INTO clients (client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes,
      require_pkce, credentials_issued_at, created_at, disabled) VALUES (?, ?, 'Old', 'client_credentials', '[]', '[]', 0, 1, 2, 0)`)
      .run('old-client', hashSecret('old-secret'));
    const store = open();
    expect(await copiedRevision(store, 'old-client')).toBe('0');
    expect(await saveAt(store, 'old-client', '0')).toBe(true);
    await store.clients.updateClient!('old-client', { disabled: true });
    expect(await saveAt(store, 'old-client', '0'), 'the first change moved it').toBe(false);
    expect(await copiedRevision(store, 'old-client')).not.toBe('0');
  });

  it('a copy is not dropped when another connection commits something else (another process saving tokens)', async () => {
    const store = open();
    const other = open();
    const { client } = buildClient();
    await store.clients.createClient!(client);
    const revision = await copiedRevision(store, client.clientId);
    expect(await saveAt(other, client.clientId, revision)).toBe(true);
    expect(store.clientCopies.find(client.clientId)?.revision).toBe(revision);
    expect(await saveAt(store, client.clientId, revision)).toBe(true);
  });
});
