// The SQLite store's logger: its background work (timed sweeps, drains resumed at open) says when it fails, once, and nothing when healthy.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TokenRecord } from '../../src/stores/contract.js';
import { describeStoreError } from '../../src/stores/describe-store-error.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { createStoreFromUrl } from '../../src/stores/from-url.js';
import {
  createSqliteStore, sqliteLockWaitChannel, type SqliteLockWaitMessage, type SqliteStore, type SqliteStoreOptions,
} from '../../src/stores/sqlite/index.js';
import { tokenValues } from '../../src/stores/sqlite/rows.js';
import { createSweepLog } from '../../src/stores/sqlite/sweep-log.js';
import { LockHolder } from './sqlite-lock-holder-process.js';
import { withConnection } from '../helpers/sqlite-connection.js';

/** A logger that keeps each warning, and tells the test when the next one comes. */
class RecordingLogger {
  readonly lines: { message: string; error?: unknown }[] = [];
  private waiter: (() => void) | null = null;

  warn(message: string, error?: unknown): void {
    this.lines.push(error === undefined ? { message } : { message, error });
    this.waiter?.();
  }

  /** Resolves once `count` warnings have come. */
  async until(count: number): Promise<void> {
    while (this.lines.length < count) await new Promise<void>((resolve) => { this.waiter = resolve; });
    this.waiter = null;
  }
}

/** Resolves at the `count`-th lock wait of a call's first miss in this process: that many calls (sweep runs) met the lock. */
function firstMisses(count: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      if ((message as SqliteLockWaitMessage).attempt !== 1 || ++seen < count) return;
      sqliteLockWaitChannel.unsubscribe(listener);
      resolve();
    };
    sqliteLockWaitChannel.subscribe(listener);
  });
}

const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-log-'));
const stores: SqliteStore[] = [];
let files = 0;

/** A new store file, made by a store that is closed again: the schema is there. */
async function newFile(): Promise<string> {
  const file = join(dir, `oauth-${++files}.sqlite`);
  await createSqliteStore({ filename: file, sweepIntervalSeconds: 0 }).close();
  return file;
}

function open(file: string, options: Omit<SqliteStoreOptions, 'filename'>): SqliteStore {
  const store = createSqliteStore({ filename: file, ...options });
  stores.push(store);
  return store;
}

const withDb = withConnection;

function token(clientId: string): TokenRecord {
  return {
    tokenHash: randomBytes(32).toString('base64url'), grantId: randomBytes(12).toString('hex'), clientId, userId: 'user-1',
    scope: ['a'], issuer: 'https://issuer.example', expiresAt: new Date(Date.now() + 3_600_000),
  };
}

/** What a revocation interrupted after its tombstone leaves: `count` tokens under a draining tombstone. Their hashes. */
function interruptedDrain(file: string, clientId: string, count: number): string[] {
  const tokens = Array.from({ length: count }, () => token(clientId));
  withDb(file, (db) => {
    const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at, issued_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    db.transaction(() => {
      for (const t of tokens) insert.run(...tokenValues('access', t, Date.now() - 2000));
      db.prepare('INSERT INTO revoked_clients (client_id, revoked_at, expires_at, draining) VALUES (?, ?, ?, 1)')
        .run(clientId, Date.now() - 1000, Date.now() + 86_400_000);
    })();
  });
  return tokens.map((t) => t.tokenHash);
}

/** Expired rows a sweep deletes. */
function expiredRows(file: string, prefix: string): void {
  withDb(file, (db) => {
    const insert = db.prepare('INSERT INTO rate_limits (key, count, expires_at) VALUES (?, 1, ?)');
    for (let i = 0; i < 50; i++) insert.run(`${prefix}-${i}`, Date.now() - 1000);
  });
}

const count = (file: string, sql: string): number => withDb(file, (db) => db.prepare<[], number>(sql).pluck().get()!);

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

afterEach(async () => {
  vi.restoreAllMocks();
  for (const store of stores.splice(0)) await store.close();
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite store\'s logger: background failures no caller sees', () => {
  let file: string;
  let holder: LockHolder;

  beforeAll(async () => {
    file = await newFile();
    holder = new LockHolder(file);
    await holder.ready();
  }, 30_000);

  afterAll(() => holder?.stop());

  it('timed sweeps that meet another process\'s lock past lockTimeoutMs: one line for the streak, one when a sweep gets through again', async () => {
    const logger = new RecordingLogger();
    await holder.lock();
    let locked = true;
    try {
      // Four runs met the lock: the first three have failed and been reported by then.
      const fourRuns = firstMisses(4);
      open(file, { sweepIntervalSeconds: 0.005, lockTimeoutMs: 1, logger });
      await fourRuns;
      expect(logger.lines).toHaveLength(1);
      const [failed] = logger.lines;
      expect(failed!.message).toBe('express-oauth-router: SQLite sweep of expired rows failed; the next sweep tries again');
      expect(failed!.error).toBeInstanceOf(StoreUnavailableError);
      expect(describeStoreError(failed!.error).message).toMatch(/^SQLite store unavailable \(SQLITE_BUSY.* after waiting 1 ms for another connection's lock\)$/);
      await holder.release();
      locked = false;
    } finally {
      if (locked) await holder.release();
    }
    await logger.until(2);
    expect(logger.lines[1]!.message).toMatch(/^express-oauth-router: SQLite sweep of expired rows done again after ([3-9]|\d{2,}) failed runs$/);
    expect(logger.lines[1]!.error).toBeUndefined();
  });

  it('a sweepExpired() that fails rejects to its caller and logs nothing', async () => {
    const logger = new RecordingLogger();
    const store = open(file, { sweepIntervalSeconds: 0, lockTimeoutMs: 1, logger });
    await holder.lock();
    try {
      await expect(store.sweepExpired()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await holder.release();
    }
    expect(logger.lines).toEqual([]);
  });

  it('a drain resumed at open that meets the lock past lockTimeoutMs logs one line, without a token hash; the next sweep finishes it', async () => {
    const logger = new RecordingLogger();
    const hashes = interruptedDrain(file, 'resumed', 300);
    await holder.lock();
    let store: SqliteStore;
    try {
      store = open(file, { sweepIntervalSeconds: 0, lockTimeoutMs: 20, logger });
      await logger.until(1);
    } finally {
      await holder.release();
    }
    expect(logger.lines).toHaveLength(1);
    const [line] = logger.lines;
    expect(line!.message).toBe('express-oauth-router: SQLite resumption of an interrupted revocation drain failed (its tokens stay refused; the next sweep finishes it)');
    expect(line!.error).toBeInstanceOf(StoreUnavailableError);
    const said = `${line!.message} ${describeStoreError(line!.error).message} ${String(line!.error)}`;
    for (const hash of hashes) expect(said).not.toContain(hash);
    expect(count(file, "SELECT draining FROM revoked_clients WHERE client_id = 'resumed'")).toBe(1);

    await store!.sweepExpired();
    expect(count(file, "SELECT count(*) FROM tokens WHERE client_id = 'resumed'")).toBe(0);
    expect(logger.lines).toHaveLength(1);
  });

  it('a logger that throws is not an unhandled rejection: timed sweeps go on, and say when they get through', async () => {
    const seen: string[] = [];
    let next: (() => void) | null = null;
    const logger = {
      warn(message: string): void {
        seen.push(message);
        next?.();
        throw new Error('the log sink is gone');
      },
    };
    const said = (n: number) => new Promise<void>((resolve) => {
      next = () => { if (seen.length >= n) resolve(); };
      if (seen.length >= n) resolve();
    });
    interruptedDrain(file, 'throwing-logger', 10);
    await holder.lock();
    try {
      open(file, { sweepIntervalSeconds: 0.005, lockTimeoutMs: 1, logger });
      // The resumed drain's line and the first failed sweep's, each thrown back by the logger.
      await said(2);
    } finally {
      await holder.release();
    }
    await said(3);
    expect(seen.slice(0, 2).sort()).toEqual([
      'express-oauth-router: SQLite resumption of an interrupted revocation drain failed (its tokens stay refused; the next sweep finishes it)',
      'express-oauth-router: SQLite sweep of expired rows failed; the next sweep tries again',
    ]);
    expect(seen[2]).toMatch(/^express-oauth-router: SQLite sweep of expired rows done again after \d+ failed runs?$/);
    await until(() => count(file, "SELECT count(*) FROM tokens WHERE client_id = 'throwing-logger'") === 0);
  });

  it('with no logger, the line goes to console.warn as one string: the error\'s message and code', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    interruptedDrain(file, 'default-logger', 10);
    await holder.lock();
    try {
      open(file, { sweepIntervalSeconds: 0, lockTimeoutMs: 20 });
      await until(() => warn.mock.calls.length > 0);
    } finally {
      await holder.release();
    }
    expect(warn.mock.calls).toHaveLength(1);
    expect(warn.mock.calls[0]).toHaveLength(1);
    expect(warn.mock.calls[0]![0]).toMatch(
      /^express-oauth-router: SQLite resumption of an interrupted revocation drain failed \(.*\): SQLite store unavailable \(SQLITE_BUSY.*\) \(OAUTH_STORE_UNAVAILABLE\)$/,
    );
    // The drain is left for a sweep: finished here so that the next test's file holds none.
    await stores[stores.length - 1]!.sweepExpired();
  });
});

describe('the SQLite store\'s logger on a healthy run', () => {
  it('a drain resumed at open and timed sweeps that get through log nothing', async () => {
    const logger = new RecordingLogger();
    const file = await newFile();
    interruptedDrain(file, 'healthy', 600);
    expiredRows(file, 'first');
    open(file, { sweepIntervalSeconds: 0.005, logger });
    await until(() => count(file, "SELECT count(*) FROM tokens WHERE client_id = 'healthy'") === 0
      && count(file, 'SELECT count(*) FROM rate_limits') === 0);
    // Rows expired after the first runs: gone only once a later timed run went through.
    expiredRows(file, 'later');
    await until(() => count(file, 'SELECT count(*) FROM rate_limits') === 0);
    expect(logger.lines).toEqual([]);
  });

  it('a store closed while it resumes a drain logs nothing: the drain stops, left for the next open', async () => {
    const logger = new RecordingLogger();
    const file = await newFile();
    interruptedDrain(file, 'closing', 3000);
    const db = new Database(file);
    try {
      // A host's own Database stays open after close(): the drain stops at its next chunk, because the store closed.
      const store = createSqliteStore(db, { sweepIntervalSeconds: 0, logger });
      await store.close();
      const left = count(file, "SELECT count(*) FROM tokens WHERE client_id = 'closing'");
      expect(left).toBeGreaterThan(0);
      // The drain's next chunk is due within its longest pause (100 ms): by then it has stopped, and said nothing.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(count(file, "SELECT count(*) FROM tokens WHERE client_id = 'closing'")).toBe(left);
      expect(logger.lines).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('createStoreFromUrl hands its logger to a SQLite store', async () => {
    const logger = new RecordingLogger();
    const file = await newFile();
    interruptedDrain(file, 'from-url', 10);
    const holder = new LockHolder(file);
    try {
      await holder.ready();
      await holder.lock();
      const store = await createStoreFromUrl(`sqlite:${file}?lock_timeout_ms=20`, { logger });
      stores.push(store as SqliteStore);
      await logger.until(1);
      await holder.release();
      expect(logger.lines[0]!.message).toMatch(/^express-oauth-router: SQLite resumption of an interrupted revocation drain failed/);
    } finally {
      holder.stop();
    }
  });
});

describe('the sweep\'s log within a streak of failed runs', () => {
  it('a run failing for another cause is a line of its own; the same cause again is not', () => {
    const logger = new RecordingLogger();
    const log = createSweepLog(logger);
    const busy = new StoreUnavailableError('SQLite store unavailable (SQLITE_BUSY after waiting 5000 ms for another connection\'s lock)');
    const ioerr = new StoreUnavailableError('SQLite store unavailable (SQLITE_IOERR_WRITE)');
    log.succeeded();
    log.failed(busy);
    log.failed(busy);
    log.failed(ioerr);
    log.failed(ioerr);
    expect(logger.lines.map((l) => l.error)).toEqual([busy, ioerr]);
    log.succeeded();
    log.succeeded();
    expect(logger.lines.map((l) => l.message).slice(2)).toEqual(['express-oauth-router: SQLite sweep of expired rows done again after 4 failed runs']);
    log.failed(busy);
    expect(logger.lines).toHaveLength(4);
  });
});
