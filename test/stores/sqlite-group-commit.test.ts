// The SQLite group commit's two batches a turn: code consumes commit ahead (unsynced), the saves they lead to in the same turn (synced).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { createGroupCommit } from '../../src/stores/sqlite/group-commit.js';
import { createLockWait } from '../../src/stores/sqlite/lock-wait.js';
import type { SqliteConnection } from '../../src/stores/sqlite/driver.js';
import { buildCode, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

const FULL = 2;
const NORMAL = 1;
const endOfTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SQLite group commit: consumes ahead of the turn’s synced batch', () => {
  let dir: string;
  const open: Array<{ close(): unknown }> = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-group-commit-'));
  });
  afterEach(async () => {
    for (const handle of open.splice(0).reverse()) await handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function store(options: { synchronous?: 'full' | 'normal' } = {}): SqliteStore {
    const created = createSqliteStore({ filename: join(dir, 'oauth.sqlite'), sweepIntervalSeconds: 0, ...options });
    open.push(created);
    return created;
  }

  function connection(): SqliteConnection {
    const db = new Database(join(dir, 'oauth.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS t (v TEXT)');
    open.push(db);
    return db as unknown as SqliteConnection;
  }

  it('a code consumed and the tokens saved on its answer are both answered within the turn the consume was made in', async () => {
    const s = store();
    const code = buildCode();
    await s.codes.saveCode(code);
    const { access, refresh } = buildTokenPair({ grantId: code.grantId, clientId: code.clientId, userId: code.userId });
    const answers: string[] = [];
    const exchange = s.codes.consumeCode(code.codeHash).then(async (result) => {
      answers.push(result.kind);
      const saved = await s.tokens.saveTokens(access, refresh, { authorizedAt: new Date() });
      answers.push(`saved ${saved}`);
    });
    // Queued after the group commit's two flushes: it runs once both batches of this turn have committed.
    await endOfTurn();
    expect(answers).toEqual(['consumed', 'saved true']);
    await exchange;
    expect(await s.tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
  });

  it('the same holds under synchronous = normal, where no batch is synced', async () => {
    const s = store({ synchronous: 'normal' });
    const code = buildCode();
    await s.codes.saveCode(code);
    const pair = buildTokenPair({ grantId: code.grantId, clientId: code.clientId, userId: code.userId });
    let saved: boolean | undefined;
    void s.codes.consumeCode(code.codeHash).then(async () => {
      saved = await s.tokens.saveTokens(pair.access, pair.refresh, { authorizedAt: new Date() });
    });
    await endOfTurn();
    expect(saved).toBe(true);
  });

  it('ahead calls commit under synchronous = NORMAL, the others under FULL, and the connection is left at FULL', async () => {
    const db = connection();
    // Compiled afresh at each read: SQLite evaluates a pragma when the statement is prepared.
    const level = (): number => db.pragma('synchronous', { simple: true }) as number;
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const commit = createGroupCommit(db, createLockWait(1000), true);
    const write = (v: string): number => {
      insert.run(v);
      return level();
    };
    const ahead = commit(write, { ahead: true });
    const synced = commit(write);
    const results = await Promise.all([synced('s1'), ahead('a1'), ahead('a2'), synced('s2')]);
    expect(results).toEqual([FULL, NORMAL, NORMAL, FULL]);
    expect(level()).toBe(FULL);
    // Ahead calls committed first, in their order; the rest after them, in theirs.
    expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual(['a1', 'a2', 's1', 's2']);
  });

  it('without relaxAhead (synchronous = normal, or no WAL) an ahead batch keeps the connection’s own level', async () => {
    const db = connection();
    db.pragma('synchronous = NORMAL');
    const level = (): number => db.pragma('synchronous', { simple: true }) as number;
    const commit = createGroupCommit(db, createLockWait(1000), false);
    const ahead = commit(() => level(), { ahead: true });
    expect(await ahead()).toBe(NORMAL);
    expect(level()).toBe(NORMAL);
  });

  it('an ahead call that fails rolls back alone; the calls of both batches get their own answers', async () => {
    const db = connection();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const commit = createGroupCommit(db, createLockWait(1000), true);
    const ahead = commit((v: string) => {
      insert.run(v);
      if (v === 'bad') throw new Error('refused');
      return v;
    }, { ahead: true });
    const synced = commit((v: string) => insert.run(v).changes);
    const results = await Promise.allSettled([ahead('a1'), ahead('bad'), synced('s1'), ahead('a2')]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['a1', 'refused', 1, 'a2']);
    expect(db.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual(['a1', 'a2', 's1']);
  });

  it('a call after which SQLite rolled the whole batch back (a full disk) fails the batch: no later call commits on its own', async () => {
    const db = connection();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    // The file may grow by one page: a row larger than a page meets SQLITE_FULL, and SQLite then rolls back the
    // whole transaction, not just the statement (sqlite.org/lang_transaction.html, "Response To Errors").
    db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 1}`);
    const commit = createGroupCommit(db, createLockWait(1000), true);
    const synced = commit((v: string) => insert.run(v).changes);
    const results = await Promise.allSettled([synced('before'), synced('x'.repeat(20_000)), synced('after')]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    }
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
    expect(db.inTransaction).toBe(false);
    // The store goes on: the next turn's batch commits.
    await expect(synced('next')).resolves.toBe(1);
  });
});
