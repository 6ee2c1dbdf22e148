// The SQLite store passes the conformance suite and keeps its promises across files, connections and restarts.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsumeResult, AuthorizationCodeRecord, Store } from '../../src/stores/contract.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { runSqlite } from '../../src/stores/sqlite/errors.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { SQLITE_SCHEMA_VERSION } from '../../src/stores/sqlite/schema.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { buildClient, buildCode, buildTokenPair } from '../../src/testing/conformance-fixtures.js';

const dirOf = new WeakMap<Store, string>();

runStoreConformance({
  name: 'sqlite',
  createStore() {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-'));
    const store = createSqliteStore({ filename: join(dir, 'oauth.sqlite') });
    dirOf.set(store, dir);
    return store;
  },
  async destroyStore(store) {
    await store.close?.();
    const dir = dirOf.get(store);
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
});

describe('sqlite store specifics', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];

  function tempFile(): string {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-'));
    dirs.push(dir);
    return join(dir, 'sub', 'oauth.sqlite');
  }

  function open(filename: string): Store {
    const store = createSqliteStore({ filename });
    stores.push(store);
    return store;
  }

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close?.();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('data survives close and reopen of the same file (process restart)', async () => {
    const file = tempFile();
    const first = open(file);
    const { client } = buildClient();
    const { access, refresh } = buildTokenPair({ clientId: client.clientId });
    await first.clients.saveClient(client);
    await first.tokens.saveTokens(access, refresh);
    await first.close?.();

    const second = open(file);
    expect(await second.clients.findClient(client.clientId)).toEqual(client);
    expect(await second.tokens.findAccessToken(access.tokenHash)).toEqual(access);
    expect(await second.tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
  });

  it('runs in WAL mode with the current schema version', () => {
    const file = tempFile();
    open(file);
    const probe = new Database(file, { readonly: true });
    try {
      expect(probe.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(probe.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    } finally {
      probe.close();
    }
  });

  it('schema creation is idempotent when two store objects open the same file', async () => {
    const file = tempFile();
    const a = open(file);
    const b = open(file);
    const { client } = buildClient();
    await a.clients.saveClient(client);
    expect(await b.clients.findClient(client.clientId)).toEqual(client);
    const c = open(file);
    expect(await c.clients.listClients()).toHaveLength(1);
  });

  it('consumeCode is exactly-once across two connections to the same file', async () => {
    const file = tempFile();
    const a = open(file);
    const b = open(file);
    const code = buildCode();
    await a.codes.saveCode(code);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).codes.consumeCode(code.codeHash)),
    );
    expect(results.filter((r) => r.kind === 'consumed')).toEqual([{ kind: 'consumed', record: code }]);
    expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(19);
    expect(await b.codes.consumeCode(code.codeHash)).toEqual({ kind: 'replayed', grantId: code.grantId });
  });

  it('a grant revoked through one connection is refused by saveTokens on the other', async () => {
    const file = tempFile();
    const a = open(file);
    const b = open(file);
    const { access, refresh } = buildTokenPair();
    await a.tokens.revokeGrant(access.grantId);
    expect(await b.tokens.saveTokens(access, refresh)).toBe(false);
  });

  it('stores only hashes, dates as integer milliseconds and arrays as JSON text', async () => {
    const file = tempFile();
    const store = open(file);
    const { client, secret } = buildClient();
    await store.clients.saveClient(client);
    const probe = new Database(file, { readonly: true });
    try {
      const row = probe.prepare('SELECT * FROM clients').get() as Record<string, unknown>;
      expect(Object.values(row)).not.toContain(secret);
      expect(row['created_at']).toBe(client.createdAt.getTime());
      expect(row['redirect_uris']).toBe(JSON.stringify(client.redirectUris));
    } finally {
      probe.close();
    }
  });

  it('refuses a negative sweepIntervalSeconds, naming the option', () => {
    expect(() => createSqliteStore({ filename: ':memory:', sweepIntervalSeconds: -1 })).toThrow(
      /sweepIntervalSeconds/,
    );
  });

  it('accepts an open Database and leaves it open on close()', async () => {
    const db = new Database(':memory:');
    const store = createSqliteStore(db);
    await store.close?.();
    expect(db.open).toBe(true);
    db.close();
  });

  it('closing the store makes later calls fail with StoreUnavailableError (503), not a raw driver error', async () => {
    const store = createSqliteStore({ filename: tempFile() });
    await store.close?.();
    await expect(store.clients.findClient('x')).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('runSqlite maps lock and disk failures to StoreUnavailableError and rethrows bugs unchanged', () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    expect(() => runSqlite(() => { throw busy; })).toThrow(StoreUnavailableError);
    const constraint = Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
    expect(() => runSqlite(() => { throw constraint; })).toThrow(constraint);
  });

  it('six processes opening a new file at once all migrate it without error and consume one code exactly once', async () => {
    const file = tempFile();
    const worker = fileURLToPath(new URL('./sqlite-process-worker.ts', import.meta.url));
    const children: ChildProcess[] = Array.from({ length: 6 }, () =>
      fork(worker, [file], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    const nextMessage = (child: ChildProcess) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        child.once('message', (m) => resolve(m as Record<string, unknown>));
        child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
      });
    try {
      const ready = await Promise.all(children.map(nextMessage));
      expect(ready).toEqual(children.map(() => ({ ready: true })));
      const code = buildCode();
      await open(file).codes.saveCode(code);
      const answers = children.map(nextMessage);
      for (const child of children) child.send({ codeHash: code.codeHash });
      const results = (await Promise.all(answers)).map((a) => a['result'] as ConsumeResult<AuthorizationCodeRecord>);
      expect(results.filter((r) => r.kind === 'consumed')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(5);
    } finally {
      for (const child of children) child.kill();
    }
  }, 30_000);
});
