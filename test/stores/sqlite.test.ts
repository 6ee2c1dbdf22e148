// The SQLite store passes the conformance suite and keeps its promises across files, connections, processes and versions.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationCodeRecord, ConsumeResult, Store } from '../../src/stores/contract.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { runSqlite } from '../../src/stores/sqlite/errors.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from '../../src/stores/sqlite/schema.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { buildClient, buildCode, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import type { SaveReport, WorkerMessage } from './sqlite-process-worker.js';
import { withConnection } from '../helpers/sqlite-connection.js';

/** The repository, whose sources a child process imports. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function tempFile(dirs: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-'));
  dirs.push(dir);
  return join(dir, 'sub', 'oauth.sqlite');
}

/** Reads (or writes) the file through a connection of its own, as another process would. */
const probe = withConnection;

function revokedAtOf(file: string, clientId: string): number {
  return probe(file, (db) => db.prepare<[string], number>('SELECT revoked_at FROM revoked_clients WHERE client_id = ?').pluck().get(clientId)!);
}

/** The connection and the file behind each conformance store, for the outage hook and the cleanup. */
const handles = new WeakMap<Store, { readonly db: Database.Database; readonly dir: string }>();

// The store is given its connection (it stays the test's) and a short lock wait, so that an outage can hand
// the file back to rollback-journal mode: WAL never lets a writer block a reader, a rollback journal's
// exclusive lock blocks everyone. Another connection then holds that lock, and every method meets a real
// SQLITE_BUSY until its 50 ms lock wait runs out; the outage's end restores WAL on the same connection,
// which the store goes on using.
runStoreConformance({
  name: 'sqlite',
  createStore() {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-'));
    const db = new Database(join(dir, 'oauth.sqlite'));
    const store = createSqliteStore(db, { lockTimeoutMs: 50 });
    handles.set(store, { db, dir });
    return store;
  },
  // Another connection to the same file, as a second process (another instance, the CLI) opens it.
  openPeer: (store) => createSqliteStore(new Database(handles.get(store)!.db.name), { lockTimeoutMs: 50 }),
  async destroyStore(store) {
    await store.close?.();
    const handle = handles.get(store);
    if (!handle) return;
    handle.db.close();
    rmSync(handle.dir, { recursive: true, force: true });
  },
  async simulateOutage(store: Store) {
    const { db } = handles.get(store)!;
    db.pragma('journal_mode = DELETE');
    const blocker = new Database(db.name);
    blocker.exec('BEGIN EXCLUSIVE');
    return async () => {
      blocker.exec('ROLLBACK');
      blocker.close();
      db.pragma('journal_mode = WAL');
    };
  },
});

describe('sqlite store specifics', () => {
  const dirs: string[] = [];
  const stores: SqliteStore[] = [];
  const now = () => new Date();

  function open(filename: string): SqliteStore {
    const store = createSqliteStore({ filename });
    stores.push(store);
    return store;
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['deleted', (file: string) => { for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true }); }],
    ['replaced', (file: string) => { renameSync(file, `${file}.old`); writeFileSync(file, ''); }],
    // Only the WAL: the connection would go on committing into the unlinked one, lost at a crash before a checkpoint.
    ['left, but its -wal deleted', (file: string) => { rmSync(`${file}-wal`); }],
    // A path that cannot be looked at vouches for nothing (ENOTDIR here; EACCES when the folder's permissions are taken
    // away, which root, running the tests, would not feel): an outage, never a raw error answered as a bug (500).
    ['out of sight, its folder moved and a file put at its name', (file: string) => {
      renameSync(dirname(file), `${dirname(file)}.moved`);
      writeFileSync(dirname(file), '');
    }],
  ] as const)('a database file %s under a running store: saves, consumes, revocations and integration writes fail with StoreUnavailableError, never answered as done', async (_how, change) => {
    const file = tempFile(dirs);
    const store = open(file);
    const { client } = buildClient();
    await store.clients.createClient(client);
    const code = buildCode({ clientId: client.clientId, issuedAt: now() });
    await store.codes.saveCode(code);
    const first = buildTokenPair({ clientId: client.clientId });
    expect(await store.tokens.saveTokens(first.access, first.refresh, { authorizedAt: now() })).toBe(true);
    change(file);
    const later = buildTokenPair({ clientId: client.clientId });
    await expect(store.tokens.saveTokens(later.access, later.refresh, { authorizedAt: now() })).rejects.toBeInstanceOf(StoreUnavailableError);
    // A batch of several (one turn) fails whole, as does a consume.
    const two = [buildTokenPair({ clientId: client.clientId }), buildTokenPair({ clientId: client.clientId })];
    const results = await Promise.allSettled(two.map((pair) => store.tokens.saveTokens(pair.access, pair.refresh, { authorizedAt: now() })));
    expect(results.map((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError)).toEqual([true, true]);
    await expect(store.codes.consumeCode(code.codeHash)).rejects.toBeInstanceOf(StoreUnavailableError);
    // A revocation or a disable written where no restart finds it would be undone by the next start: refused too.
    await expect(store.tokens.revokeGrant(first.access.grantId)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.tokens.revokeAccessToken(first.access.tokenHash)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.tokens.revokeClientTokens(client.clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.clients.updateClient(client.clientId, { disabled: true })).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.codes.saveCode(buildCode({ clientId: client.clientId, issuedAt: now() }))).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.consents.revokeConsent('someone', client.clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
    // Nothing of it happened, as the connection itself sees it.
    expect(await store.tokens.findAccessToken(first.access.tokenHash)).toEqual(first.access);
    expect((await store.clients.findClient(client.clientId))?.disabled).toBe(false);
  });

  it('a new database file, its -wal and -shm files and the folders made for it are private to the owner (0600, 0700), whatever the umask', async () => {
    const file = join(tempFile(dirs), 'made', 'oauth.sqlite');
    const umask = process.umask(0o022);
    let store: SqliteStore;
    try {
      store = open(file);
    } finally {
      process.umask(umask);
    }
    const pair = buildTokenPair();
    expect(await store.tokens.saveTokens(pair.access, pair.refresh, { authorizedAt: now() })).toBe(true);
    const mode = (path: string): number => statSync(path).mode & 0o777;
    expect([file, `${file}-wal`, `${file}-shm`].map(mode)).toEqual([0o600, 0o600, 0o600]);
    expect([dirname(file), dirname(dirname(file))].map(mode)).toEqual([0o700, 0o700]);
  });

  it('a file whose folder cannot be made is refused with fs\'s error naming the folder, at once (Node 20\'s recursive mkdir spun forever under /proc)', () => {
    // In a child process, with a deadline: the bug this guards against never returned.
    const source = `import { createSqliteStore } from ${JSON.stringify(join(ROOT, 'src/stores/sqlite/index.ts'))};
      try { createSqliteStore({ filename: '/proc/no-such-process/oauth.sqlite' }); console.log('opened'); }
      catch (err) { console.log(JSON.stringify({ code: err.code, path: err.path })); }`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { cwd: ROOT, encoding: 'utf8', timeout: 15_000 });
    expect(child.signal, 'still running after 15 s').toBeNull();
    expect(JSON.parse(child.stdout.trim())).toEqual({ code: 'ENOENT', path: '/proc/no-such-process' });
  });

  it('an existing database file keeps the mode its owner gave it', async () => {
    const file = tempFile(dirs);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '', { mode: 0o640 });
    chmodSync(file, 0o640);
    open(file);
    expect(statSync(file).mode & 0o777).toBe(0o640);
  });

  it('a store opened by a relative path keeps saving after the host changes its working directory', async () => {
    const file = tempFile(dirs);
    mkdirSync(dirname(file), { recursive: true });
    const before = process.cwd();
    process.chdir(dirname(file));
    let store: SqliteStore;
    try {
      store = open('oauth.sqlite');
    } finally {
      process.chdir(before);
    }
    const pair = buildTokenPair();
    expect(await store.tokens.saveTokens(pair.access, pair.refresh, { authorizedAt: now() })).toBe(true);
  });

  it('data survives close and reopen of the same file (process restart)', async () => {
    const file = tempFile(dirs);
    const first = open(file);
    const { client } = buildClient();
    const { access, refresh } = buildTokenPair({ clientId: client.clientId });
    const code = buildCode({ issuedAt: now() });
    expect(await first.clients.createClient(client)).toBe(true);
    expect(await first.tokens.saveTokens(access, refresh, { authorizedAt: now() })).toBe(true);
    await first.codes.saveCode(code);
    await first.close();

    const second = open(file);
    expect(await second.clients.findClient(client.clientId)).toEqual(client);
    expect(await second.tokens.findAccessToken(access.tokenHash)).toEqual(access);
    expect(await second.tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
    expect(await second.codes.consumeCode(code.codeHash)).toEqual({ kind: 'consumed', record: code });
  });

  it('runs in WAL mode with the current schema version', () => {
    const file = tempFile(dirs);
    open(file);
    const [mode, version] = probe(file, (db) => [db.pragma('journal_mode', { simple: true }), db.pragma('user_version', { simple: true })]);
    expect(mode).toBe('wal');
    expect(version).toBe(SQLITE_SCHEMA_VERSION);
  });

  it('a version 2 file migrates to the current schema, giving existing codes issued_at = expires_at - 10 minutes', async () => {
    const file = tempFile(dirs);
    mkdirSync(dirname(file), { recursive: true });
    const code = buildCode({ issuedAt: new Date(0) });
    // The file as version 2 left it (released migrations never change), with a code saved the version 2 way.
    probe(file, (db) => {
      migrateSqliteSchema(db, 2);
      db.prepare(`INSERT INTO codes (code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge, issuer, expires_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(code.codeHash, code.grantId, code.clientId, code.userId, code.redirectUri,
        JSON.stringify(code.scope), code.codeChallenge, code.issuer, code.expiresAt.getTime());
    });
    const store = open(file);
    expect(probe(file, (db) => db.pragma('user_version', { simple: true }))).toBe(SQLITE_SCHEMA_VERSION);
    const issuedAt = new Date(code.expiresAt.getTime() - 10 * 60 * 1000);
    expect(await store.codes.consumeCode(code.codeHash)).toEqual({ kind: 'consumed', record: { ...code, issuedAt } });
    await store.tokens.revokeClientTokens(code.clientId, code.userId);
    const { access } = buildTokenPair({ clientId: code.clientId, userId: code.userId });
    expect(await store.tokens.saveTokens(access, null, { authorizedAt: issuedAt })).toBe(false);
  });

  it('a version 3 file upgrades in place: its integrations read with no tokenEndpointAuthMethod, and can then be given one', async () => {
    const file = tempFile(dirs);
    mkdirSync(dirname(file), { recursive: true });
    const { client } = buildClient();
    // The file as version 3 left it, with an integration inserted the version 3 way (no method column).
    probe(file, (db) => {
      migrateSqliteSchema(db, 3);
      db.prepare(`INSERT INTO clients (client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes, require_pkce,
        credentials_issued_at, created_at, disabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(client.clientId, client.clientSecretHash,
        client.name, client.flow, JSON.stringify(client.redirectUris), JSON.stringify(client.allowedScopes), 1,
        client.credentialsIssuedAt.getTime(), client.createdAt.getTime(), 0);
    });
    const store = open(file);
    expect(probe(file, (db) => db.pragma('user_version', { simple: true }))).toBe(SQLITE_SCHEMA_VERSION);
    const found = await store.clients.findClient(client.clientId);
    expect(found).toEqual(client);
    expect(found).not.toHaveProperty('tokenEndpointAuthMethod');
    const restricted = { ...client, tokenEndpointAuthMethod: 'client_secret_post' as const };
    expect(await store.clients.updateClient(client.clientId, { tokenEndpointAuthMethod: 'client_secret_post' })).toEqual(restricted);
    expect(await open(file).clients.findClient(client.clientId)).toEqual(restricted);
  });

  it('no column compares with a case-folding or space-trimming collation: ids are compared exactly', async () => {
    const file = tempFile(dirs);
    const store = open(file);
    const tables = probe(file, (db) => db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL").all());
    expect(tables.filter((t) => /COLLATE|NOCASE|RTRIM/i.test(t.sql))).toEqual([]);
    const { client } = buildClient({ clientId: 'Abc' });
    await store.clients.createClient(client);
    expect(await store.clients.createClient({ ...client, clientId: 'abc' })).toBe(true);
    expect(await store.clients.findClient('Abc ')).toBeNull();
  });

  it('schema creation is idempotent when two store objects open the same file', async () => {
    const file = tempFile(dirs);
    const a = open(file);
    const b = open(file);
    const { client } = buildClient();
    await a.clients.createClient(client);
    expect(await b.clients.findClient(client.clientId)).toEqual(client);
    expect(await open(file).clients.listClients()).toHaveLength(1);
  });

  it('consumeCode is exactly-once across two connections to the same file', async () => {
    const file = tempFile(dirs);
    const a = open(file);
    const b = open(file);
    const code = buildCode({ issuedAt: now() });
    await a.codes.saveCode(code);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).codes.consumeCode(code.codeHash)),
    );
    expect(results.filter((r) => r.kind === 'consumed')).toEqual([{ kind: 'consumed', record: code }]);
    expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(19);
  });

  it('revocations through one connection are refused by saveTokens on the other: grant, integration, user', async () => {
    const file = tempFile(dirs);
    const a = open(file);
    const b = open(file);
    const before = now();
    const grant = buildTokenPair();
    const client = buildTokenPair();
    const user = buildTokenPair();
    await a.tokens.revokeGrant(grant.access.grantId);
    await a.tokens.revokeClientTokens(client.access.clientId);
    await a.tokens.revokeClientTokens(user.access.clientId, user.access.userId!);
    expect(await b.tokens.saveTokens(grant.access, grant.refresh, { authorizedAt: now() })).toBe(false);
    expect(await b.tokens.saveTokens(client.access, client.refresh, { authorizedAt: before })).toBe(false);
    expect(await b.tokens.saveTokens(user.access, user.refresh, { authorizedAt: before })).toBe(false);
    // Authorized after the revocation's moment (read from the file: no waiting): saved.
    const revokedAt = revokedAtOf(file, client.access.clientId);
    expect(await b.tokens.saveTokens(client.access, client.refresh, { authorizedAt: new Date(revokedAt + 1) })).toBe(true);
  });

  it('a revocation issued while saves wait in the group commit refuses them; each save gets its own answer', async () => {
    const store = open(tempFile(dirs));
    const authorizedAt = now();
    const revoked = buildTokenPair({ clientId: 'revoked-client' });
    const other = buildTokenPair();
    const saves = [store.tokens.saveTokens(revoked.access, revoked.refresh, { authorizedAt }), store.tokens.saveTokens(other.access, other.refresh, { authorizedAt })];
    // Both saves are queued for the next turn; this revocation commits first, in its own transaction.
    const revocation = store.tokens.revokeClientTokens('revoked-client');
    expect(await Promise.all([...saves, revocation])).toEqual([false, true, undefined]);
    expect(await store.tokens.findAccessToken(revoked.access.tokenHash)).toBeNull();
    expect(await store.tokens.findAccessToken(other.access.tokenHash)).toEqual(other.access);
  });

  it('a revocation moment never moves back: the latest one recorded (e.g. by another process) is kept', async () => {
    const file = tempFile(dirs);
    const store = open(file);
    const later = Date.now() + 60_000;
    probe(file, (db) => db.prepare('INSERT INTO revoked_clients (client_id, revoked_at, expires_at) VALUES (?, ?, ?)').run('c', later, later + 1));
    await store.tokens.revokeClientTokens('c');
    expect(revokedAtOf(file, 'c')).toBe(later);
  });

  it('stores only hashes, dates as integer milliseconds and arrays as JSON text', async () => {
    const file = tempFile(dirs);
    const { client, secret } = buildClient();
    await open(file).clients.createClient(client);
    const row = probe(file, (db) => db.prepare('SELECT * FROM clients').get() as Record<string, unknown>);
    expect(Object.values(row)).not.toContain(secret);
    expect(row['created_at']).toBe(client.createdAt.getTime());
    expect(row['redirect_uris']).toBe(JSON.stringify(client.redirectUris));
  });

  it('refuses a negative sweepIntervalSeconds, naming the option', () => {
    expect(() => createSqliteStore({ filename: ':memory:', sweepIntervalSeconds: -1 })).toThrow(/sweepIntervalSeconds/);
  });

  it('accepts an open Database and leaves it open on close()', async () => {
    const db = new Database(':memory:');
    await createSqliteStore(db).close();
    expect(db.open).toBe(true);
    db.close();
  });

  it('closing the store makes later calls fail with StoreUnavailableError (503), not a raw driver error', async () => {
    const store = createSqliteStore({ filename: tempFile(dirs) });
    await store.close();
    await expect(store.clients.findClient('x')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.tokens.saveTokens(buildTokenPair().access, null, { authorizedAt: now() })).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('runSqlite maps lock and disk failures to StoreUnavailableError and rethrows bugs unchanged', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    expect(() => runSqlite(() => { throw busy; })).toThrow(StoreUnavailableError);
    const constraint = Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(() => runSqlite(() => { throw constraint; })).toThrow(constraint);
  });
});

describe('sqlite store across six processes opening a new file at once', () => {
  const dirs: string[] = [];
  const file = tempFile(dirs);
  let store: SqliteStore;
  let children: ChildProcess[] = [];
  let inboxes: Array<() => Promise<WorkerMessage>> = [];

  /** Each child's messages in order, so that none is lost between two awaits. */
  function inbox(child: ChildProcess): () => Promise<WorkerMessage> {
    const queued: WorkerMessage[] = [];
    const waiting: Array<(m: WorkerMessage) => void> = [];
    child.on('message', (m) => (waiting.shift() ?? ((x: WorkerMessage) => queued.push(x)))(m as WorkerMessage));
    child.once('exit', (code) => { if (code) for (const w of waiting.splice(0)) w({ error: `worker exited (${code})` }); });
    return () => (queued.length > 0 ? Promise.resolve(queued.shift()!) : new Promise((resolve) => waiting.push(resolve)));
  }

  beforeAll(async () => {
    const worker = fileURLToPath(new URL('./sqlite-process-worker.ts', import.meta.url));
    children = Array.from({ length: 6 }, () =>
      fork(worker, [file], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    inboxes = children.map(inbox);
    // Opening migrates the schema: all six do it at the same moment.
    expect(await Promise.all(inboxes.map((next) => next()))).toEqual(children.map(() => ({ ready: true })));
    store = createSqliteStore({ filename: file });
  }, 30_000);

  afterAll(async () => {
    for (const child of children) child.kill();
    await store?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('all migrate it without error, and of six processes consuming one code exactly one wins', async () => {
    const code = buildCode({ issuedAt: new Date() });
    await store.codes.saveCode(code);
    for (const child of children) child.send({ consume: code.codeHash });
    const results = (await Promise.all(inboxes.map((next) => next()))).map((m) => m.result as ConsumeResult<AuthorizationCodeRecord>);
    expect(results.filter((r) => r.kind === 'consumed')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(5);
  });

  it('revokeClientTokens racing saves in six other processes leaves no token authorized at or before it, and refuses none after', async () => {
    const clientId = 'raced-client';
    for (const child of children) child.send({ save: { clientId, count: 150 } });
    // Revoke once any process is a third of the way: all are then mid-stream, in no order we choose.
    await Promise.race(inboxes.map((next) => next()));
    await store.tokens.revokeClientTokens(clientId);
    const revokedAt = revokedAtOf(file, clientId);
    const reports: SaveReport[] = [];
    for (const next of inboxes) {
      for (let m = await next(); ; m = await next()) {
        if (m.error !== undefined) throw new Error(m.error);
        if (m.saves) { reports.push(...m.saves); break; }
      }
    }
    expect(reports).toHaveLength(6 * 150);
    for (const report of reports) {
      const live = (await store.tokens.findAccessToken(report.accessHash)) !== null
        && (await store.tokens.findRefreshToken(report.refreshHash)) !== null;
      // Authorized at or before the revocation: saved before it (true, then deleted) or refused after it.
      const after = report.authorizedAt > revokedAt;
      expect({ ...report, live }).toEqual({ ...report, saved: after || report.saved, live: after });
    }
  }, 30_000);
});
