// The SQLite store's durability option: synchronous = FULL by default, NORMAL on request.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { buildTokenPair } from '../../src/testing/conformance-fixtures.js';

const FULL = 2;
const NORMAL = 1;

describe('SQLite store: synchronous', () => {
  let dir: string;
  const open: Array<{ close(): unknown }> = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-sync-'));
  });
  afterEach(async () => {
    for (const handle of open.splice(0).reverse()) await handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function storeOn(options: { synchronous?: 'full' | 'normal' } = {}): { db: Database.Database; store: SqliteStore } {
    const db = new Database(join(dir, 'oauth.sqlite'));
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0, ...options });
    open.push(db, store);
    return { db, store };
  }

  it('defaults to synchronous = FULL: every commit, token saves included, is synced before it is answered', async () => {
    const { db, store } = storeOn();
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    const { access, refresh } = buildTokenPair();
    await expect(store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).resolves.toBe(true);
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
  });

  it("leaves a host connection's page cache as the host set it (the store sizes only the connections it opens)", () => {
    const db = new Database(join(dir, 'oauth.sqlite'));
    db.pragma('cache_size = -4096');
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0 });
    open.push(db, store);
    expect(db.pragma('cache_size', { simple: true })).toBe(-4096);
  });

  it("synchronous: 'normal' runs the connection at NORMAL", () => {
    const { db } = storeOn({ synchronous: 'normal' });
    expect(db.pragma('synchronous', { simple: true })).toBe(NORMAL);
  });

  it('an unknown synchronous value is refused with a TypeError naming the option', () => {
    expect(() => createSqliteStore({ filename: join(dir, 'x.sqlite'), synchronous: 'off' as 'full' })).toThrow(/synchronous/);
  });

  it('under FULL, saves made across event-loop turns all commit, each answered once, and another connection reads them', async () => {
    const { store } = storeOn();
    const pairs = Array.from({ length: 40 }, () => buildTokenPair());
    // Two waves in two event-loop turns: two group commits, each synced.
    const first = pairs.slice(0, 20).map(({ access, refresh }) => store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() }));
    await new Promise((resolve) => setImmediate(resolve));
    const second = pairs.slice(20).map(({ access, refresh }) => store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() }));
    expect(await Promise.all([...first, ...second])).toEqual(pairs.map(() => true));
    const reader = new Database(join(dir, 'oauth.sqlite'), { readonly: true });
    open.push(reader);
    const count = reader.prepare('SELECT count(*) FROM tokens').pluck().get();
    expect(count).toBe(80);
  });

  it('an in-memory database (no file to sync) saves as usual', async () => {
    const store = createSqliteStore({ filename: ':memory:', sweepIntervalSeconds: 0 });
    open.push(store);
    const { access, refresh } = buildTokenPair();
    await expect(store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).resolves.toBe(true);
    await expect(store.tokens.findAccessToken(access.tokenHash)).resolves.toMatchObject({ grantId: access.grantId });
  });
});
