// The SQLite store's integration copies: a save from a stale copy is refused, whatever another writer did to the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { buildClient, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';

let dir: string;
let file: string;
const opened: { close(): unknown }[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-revision-'));
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

/** A connection of its own: the CLI of a previous version, a DBA's shell, a host's ORM. */
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

async function registered(store: SqliteStore): Promise<string> {
  const { client } = buildClient({ flow: 'client_credentials', redirectUris: [] });
  expect(await store.clients.createClient!(client)).toBe(true);
  return client.clientId;
}

describe("SQLite store: saves from integration copies (issue 10; RFC 6749 §2.3.1)", () => {
  it('a save from a current copy is kept; after an UPDATE by another connection it is refused, and a new lookup saves again', async () => {
    const store = open();
    const clientId = await registered(store);
    const revision = await copiedRevision(store, clientId);
    expect(await saveAt(store, clientId, revision)).toBe(true);
    raw().prepare('UPDATE clients SET disabled = 1 WHERE client_id = ?').run(clientId);
    expect(await saveAt(store, clientId, revision), 'the stale copy saves nothing').toBe(false);
    raw().prepare('UPDATE clients SET disabled = 0 WHERE client_id = ?').run(clientId);
    expect(await saveAt(store, clientId, await copiedRevision(store, clientId))).toBe(true);
  });

  it("a host's ORM that writes a version column of its own changes nothing a copy relies on", async () => {
    const store = open();
    const clientId = await registered(store);
    const db = raw();
    db.exec('ALTER TABLE clients ADD COLUMN lock_version INTEGER NOT NULL DEFAULT 0');
    db.prepare("UPDATE clients SET name = 'P2', lock_version = lock_version + 1 WHERE client_id = ?").run(clientId);
    const revision = await copiedRevision(store, clientId);
    db.prepare('UPDATE clients SET disabled = 1, lock_version = lock_version + 1 WHERE client_id = ?').run(clientId);
    expect(await saveAt(store, clientId, revision)).toBe(false);
  });

  it('integrations restored from an older backup while the server runs: a copy read after the backup saves nothing once the restored row is disabled', async () => {
    const store = open();
    const clientId = await registered(store);
    const backup = join(dir, 'backup.sqlite');
    await store.clients.findClient(clientId);
    const db = raw();
    await db.backup(backup);
    db.prepare("UPDATE clients SET name = 'Renamed' WHERE client_id = ?").run(clientId);
    const revision = await copiedRevision(store, clientId);
    // The backup's integrations put back, then the restored one disabled (by the CLI, say).
    db.exec(`ATTACH '${backup}' AS old; BEGIN; DELETE FROM clients; INSERT INTO clients SELECT * FROM old.clients; COMMIT; DETACH old;`);
    db.prepare('UPDATE clients SET disabled = 1 WHERE client_id = ?').run(clientId);
    expect(await saveAt(store, clientId, revision)).toBe(false);
  });

  it("a table rebuilt by hand (create, copy, drop, rename), then a disable, refuses the copy read before", async () => {
    const store = open();
    const clientId = await registered(store);
    const revision = await copiedRevision(store, clientId);
    const db = raw();
    const ddl = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'clients'").pluck().get() as string;
    db.exec(`BEGIN; ${ddl.replace('CREATE TABLE clients', 'CREATE TABLE clients_new')};
      INSERT INTO clients_new SELECT * FROM clients; DROP TABLE clients; ALTER TABLE clients_new RENAME TO clients;
      CREATE INDEX clients_created_at ON clients (created_at, client_id); COMMIT;`);
    expect(await saveAt(store, clientId, revision), 'the same values: the copy still holds').toBe(true);
    db.prepare('UPDATE clients SET disabled = 1 WHERE client_id = ?').run(clientId);
    expect(await saveAt(store, clientId, revision)).toBe(false);
  });

  it('an integration deleted and registered again under its id with another secret refuses a copy of the first', async () => {
    const store = open();
    const clientId = await registered(store);
    const first = await copiedRevision(store, clientId);
    const other = open();
    const original = (await other.clients.findClient(clientId))!;
    expect(await other.clients.deleteClient!(clientId)).toBe(true);
    expect(await saveAt(store, clientId, first), 'gone: refused').toBe(false);
    expect(await other.clients.createClient!({ ...original, clientSecretHash: hashSecret('the new registration') })).toBe(true);
    expect(await saveAt(store, clientId, first), 'the copy of the deleted one').toBe(false);
  });

  it("a revision this store never gave, or another integration's, is refused", async () => {
    const store = open();
    const clientId = await registered(store);
    const otherId = await registered(store);
    const revision = await copiedRevision(store, clientId);
    for (const given of ['', '0', '[]', 'null', '{}', revision.slice(1), JSON.stringify(JSON.parse(revision).slice(1)), await copiedRevision(store, otherId)]) {
      expect(await saveAt(store, clientId, given), JSON.stringify(given)).toBe(false);
    }
    expect(await saveAt(store, clientId, revision)).toBe(true);
  });

  it('a copy is not dropped when another connection commits something else (another process saving tokens)', async () => {
    const store = open();
    const other = open();
    const clientId = await registered(store);
    const revision = await copiedRevision(store, clientId);
    expect(await saveAt(other, clientId, revision)).toBe(true);
    expect(store.clientCopies.find(clientId)?.revision).toBe(revision);
    expect(await saveAt(store, clientId, revision)).toBe(true);
  });
});
