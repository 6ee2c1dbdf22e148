// SQLite revocations of many tokens: a short tombstone transaction that refuses them at once, then a drain in short chunks.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { TokenRecord } from '../../src/stores/contract.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { tokenValues } from '../../src/stores/sqlite/rows.js';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from '../../src/stores/sqlite/schema.js';
import { withConnection } from '../helpers/sqlite-connection.js';

const dirs: string[] = [];
const stores: SqliteStore[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-drain-'));
  dirs.push(dir);
  return join(dir, 'oauth.sqlite');
}

function open(file: string): SqliteStore {
  const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  stores.push(store);
  return store;
}

/** A token with a cheap random hash (thousands are inserted). */
function token(clientId: string, userId: string | null, grantId = randomBytes(12).toString('hex')): TokenRecord {
  return {
    tokenHash: randomBytes(32).toString('base64url'), grantId, clientId, userId, scope: ['a'],
    issuer: 'https://issuer.example', expiresAt: new Date(Date.now() + 3_600_000),
  };
}

/** Inserts access and refresh tokens of `grants` grants, as saves authorized at `issuedAt` left them. */
function seed(file: string, clientId: string, grants: number, issuedAt = Date.now() - 1000): { access: TokenRecord; refresh: TokenRecord }[] {
  const pairs = Array.from({ length: grants }, (_, i) => {
    const access = token(clientId, `user-${i % 50}`);
    return { access, refresh: token(clientId, access.userId, access.grantId) };
  });
  const db = new Database(file);
  try {
    const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at, issued_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    db.transaction(() => {
      for (const { access, refresh } of pairs) {
        insert.run(...tokenValues('access', access, issuedAt));
        insert.run(...tokenValues('refresh', refresh, issuedAt));
      }
    })();
  } finally {
    db.close();
  }
  return pairs;
}

function read<T>(file: string, query: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return query(db);
  } finally {
    db.close();
  }
}

const countTokens = (file: string, clientId: string): number =>
  read(file, (db) => db.prepare<[string], number>('SELECT count(*) FROM tokens WHERE client_id = ?').pluck().get(clientId)!);

const draining = (file: string, clientId: string): number | undefined =>
  read(file, (db) => db.prepare<[string], number>('SELECT draining FROM revoked_clients WHERE client_id = ?').pluck().get(clientId));

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The state a revocation's first transaction commits: the tombstone, draining, and no token deleted yet. */
function tombstoneOnly(file: string, clientId: string, revokedAt: number, expiresAt = revokedAt + 86_400_000): void {
  withConnection(file, (db) => {
    db.prepare('INSERT INTO revoked_clients (client_id, revoked_at, expires_at, draining) VALUES (?, ?, ?, 1)').run(clientId, revokedAt, expiresAt);
  });
}

describe('SQLite revocation of many tokens: tombstone first, then a drain in short transactions (RFC 7009 §2.1)', () => {
  it('other work goes on between the chunks: a save made while 3,000 tokens are revoked is answered before the revocation returns', async () => {
    const file = tempFile();
    const store = open(file);
    seed(file, 'big', 1500);
    const order: string[] = [];
    const feed = store.revocations!;
    const mark = feed.mark();
    let markWhileDraining = mark;
    const revoked = store.tokens.revokeClientTokens('big').then(() => order.push('revoked'));
    const saved = store.tokens.saveTokens(token('other', null), null, { authorizedAt: new Date() }).then(() => {
      order.push('saved');
      markWhileDraining = feed.mark();
    });
    await Promise.all([revoked, saved]);
    expect(order).toEqual(['saved', 'revoked']);
    // The revocation feed moved at the tombstone's commit, before the drain ended: no cached token outlives it.
    expect(markWhileDraining).not.toBe(mark);
    expect(countTokens(file, 'big')).toBe(0);
    expect(draining(file, 'big')).toBe(0);
  });

  it('a token under a tombstone is refused while its row is still there, a refresh under way cannot save from it, and a token authorized after it stays valid', async () => {
    const file = tempFile();
    const store = open(file);
    const [pair] = seed(file, 'big', 3);
    tombstoneOnly(file, 'big', Date.now());
    expect(countTokens(file, 'big')).toBe(6);
    expect(await store.tokens.findAccessToken(pair!.access.tokenHash)).toBeNull();
    expect(await store.tokens.findRefreshToken(pair!.refresh.tokenHash)).toBeNull();
    // A refresh that read the refresh token before the tombstone committed saves with its own, later, request start.
    const later = new Date(Date.now() + 3_600_000);
    expect(await store.tokens.saveTokens(token('big', pair!.access.userId, pair!.access.grantId), null, { authorizedAt: later })).toBe(false);
    // Another grant, authorized after the revocation.
    const fresh = token('big', 'user-0');
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect(await store.tokens.saveTokens(fresh, null, { authorizedAt: new Date() })).toBe(true);
    expect(await store.tokens.findAccessToken(fresh.tokenHash)).not.toBeNull();
    // The drain (here the sweep's) deletes the revoked tokens only, and the grant's refusal outlives its refresh token.
    await store.sweepExpired();
    expect(countTokens(file, 'big')).toBe(1);
    expect(draining(file, 'big')).toBe(0);
    expect(await store.tokens.findAccessToken(fresh.tokenHash)).not.toBeNull();
    expect(await store.tokens.saveTokens(token('big', pair!.access.userId, pair!.access.grantId), null, { authorizedAt: later })).toBe(false);
  });

  it('a drain killed midway (SIGKILL) leaves its tokens refused, and the next open finishes it', async () => {
    const file = tempFile();
    open(file);
    const pairs = seed(file, 'big', 10_000);
    const before = countTokens(file, 'big');
    const child = fork(fileURLToPath(new URL('./sqlite-drain-worker.ts', import.meta.url)), [file, 'big'],
      { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await new Promise((resolve) => child.once('message', resolve));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send('revoke');
    await until(() => {
      const left = countTokens(file, 'big');
      return left > 0 && left < before;
    });
    child.kill('SIGKILL');
    await exited;
    const left = countTokens(file, 'big');
    expect(left).toBeGreaterThan(0);
    expect(draining(file, 'big')).toBe(1);
    const remaining = read(file, (db) => db.prepare<[], string>("SELECT token_hash FROM tokens WHERE client_id = 'big' AND kind = 'access' LIMIT 50").pluck().all());
    expect(remaining.length).toBeGreaterThan(0);
    // The next store to open the file refuses every one of them, and finishes the drain in the background.
    const reopened = open(file);
    for (const hash of remaining) expect(await reopened.tokens.findAccessToken(hash)).toBeNull();
    await until(() => countTokens(file, 'big') === 0);
    await until(() => draining(file, 'big') === 0);
    for (const { access } of pairs.slice(0, 20)) {
      expect(await reopened.tokens.saveTokens(token('big', access.userId, access.grantId), null, { authorizedAt: new Date(Date.now() + 60_000) })).toBe(false);
    }
  }, 30_000);

  it('a tombstone past its retention is not swept while tokens under it remain: they never come back', async () => {
    const file = tempFile();
    const store = open(file);
    const [pair] = seed(file, 'big', 300, Date.now() - 10_000);
    tombstoneOnly(file, 'big', Date.now() - 5_000, Date.now() - 1);
    expect(await store.tokens.findAccessToken(pair!.access.tokenHash)).toBeNull();
    await store.sweepExpired();
    expect(countTokens(file, 'big')).toBe(0);
    expect(draining(file, 'big')).toBeUndefined();
    expect(await store.tokens.findAccessToken(pair!.access.tokenHash)).toBeNull();
  });

  it("close() stops a drain under way before its next chunk, on a host's own Database too, and the revocation rejects", async () => {
    const file = tempFile();
    open(file);
    seed(file, 'big', 5000);
    const db = new Database(file);
    try {
      const store = createSqliteStore(db, { sweepIntervalSeconds: 0 });
      const revoked = store.tokens.revokeClientTokens('big');
      await store.close();
      await expect(revoked).rejects.toMatchObject({ name: 'StoreUnavailableError' });
      const left = countTokens(file, 'big');
      expect(left).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(countTokens(file, 'big')).toBe(left);
      expect(draining(file, 'big')).toBe(1);
    } finally {
      db.close();
    }
  });

  it("one user's revocation drains that user's tokens only", async () => {
    const file = tempFile();
    const store = open(file);
    seed(file, 'big', 1000);
    await store.tokens.revokeClientTokens('big', 'user-7');
    expect(read(file, (db) => db.prepare("SELECT count(*) FROM tokens WHERE user_id = 'user-7'").pluck().get())).toBe(0);
    expect(countTokens(file, 'big')).toBe(2000 - 40);
    expect(read(file, (db) => db.prepare("SELECT draining FROM revoked_client_users WHERE client_id = 'big' AND user_id = 'user-7'").pluck().get())).toBe(0);
  });
});

describe('SQLite schema version 8: tokens keep their issued_at (RFC 7009 §2.1)', () => {
  it('a version 7 file upgrades in place: its tokens stay valid under the revocations recorded before, and are refused by one recorded after', async () => {
    const file = tempFile();
    const db = new Database(file);
    migrateSqliteSchema(db, 7);
    const old = token('c', 'alice');
    const insert = db.prepare(`INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    insert.run(...tokenValues('access', old, 0).slice(0, 8));
    // Revoked by the previous version before the token was saved (it deleted what it revoked in its own transaction).
    db.prepare('INSERT INTO revoked_clients (client_id, revoked_at, expires_at) VALUES (?, ?, ?)').run('c', Date.now() - 60_000, Date.now() + 60_000);
    db.close();

    const store = open(file);
    expect(read(file, (check) => check.pragma('user_version', { simple: true }))).toBe(SQLITE_SCHEMA_VERSION);
    expect(await store.tokens.findAccessToken(old.tokenHash)).not.toBeNull();
    // A process of version 7 still serving from the file inserts without issued_at: its token reads the upgrade's moment.
    const oldWriter = token('c', 'bob');
    const writer = new Database(file);
    writer.prepare(`INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(...tokenValues('access', oldWriter, 0).slice(0, 8));
    writer.close();
    expect(await store.tokens.findAccessToken(oldWriter.tokenHash)).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 2));
    await store.tokens.revokeClientTokens('c');
    expect(await store.tokens.findAccessToken(old.tokenHash)).toBeNull();
    expect(await store.tokens.findAccessToken(oldWriter.tokenHash)).toBeNull();
    expect(countTokens(file, 'c')).toBe(0);
  });

  it('a token inserted by a version 7 process after a revocation of version 8 is refused (the cautious side)', async () => {
    const file = tempFile();
    const store = open(file);
    await new Promise((resolve) => setTimeout(resolve, 2));
    await store.tokens.revokeClientTokens('c');
    const late = token('c', 'alice');
    const writer = new Database(file);
    writer.prepare(`INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(...tokenValues('access', late, 0).slice(0, 8));
    writer.close();
    expect(await store.tokens.findAccessToken(late.tokenHash)).toBeNull();
  });
});
