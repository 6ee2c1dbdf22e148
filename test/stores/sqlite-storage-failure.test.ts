// The SQLite store's file failing under it (an I/O error, a damaged page, a file that takes no writes): 503
// temporarily_unavailable, never a 500, and readiness says so while the failure lasts.
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { basic, createTestApp, createTestRouter } from '../helpers/app.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The router on a store over a connection of the test's own, with the readiness route. */
async function hostOn(db: Database.Database) {
  const store = createSqliteStore(db, { sweepIntervalSeconds: 0, lockTimeoutMs: 200 });
  cleanups.push(() => store.close());
  const logged: string[] = [];
  const t = await createTestApp({ logger: { warn: (m: string) => logged.push(m), error: (m: string) => logged.push(m) } }, store);
  t.app.get('/health/ready', createTestRouter(store).health.readiness);
  const ready = async () => (await request(t.app).get('/health/ready')).status;
  const token = () => request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(t.credentialsClient))
    .send({ grant_type: 'client_credentials' });
  return { ...t, token, ready, logged };
}

function tempDatabase(): { db: Database.Database; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-storage-failure-'));
  const file = join(dir, 'oauth.sqlite');
  const db = new Database(file);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => { if (db.open) db.close(); });
  return { db, file };
}

describe('SQLite store whose file fails under it', () => {
  it('a damaged page met by a token save (SQLITE_CORRUPT, as SQLite reports reads that fail after an I/O error) is 503 temporarily_unavailable, not 500', async () => {
    const { db, file } = tempDatabase();
    const h = await hostOn(db);
    expect((await h.token()).status).toBe(200);
    // Everything into the main file, then the tokens table's root page overwritten there and the connection's cache
    // of it dropped, so the next save reads it from the file.
    db.pragma('wal_checkpoint(TRUNCATE)');
    const root = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'tokens'").pluck().get() as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0xff), 0, pageSize, (root - 1) * pageSize);
    closeSync(fd);
    db.pragma('shrink_memory');
    const res = await h.token();
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');
    expect(h.logged.join('\n')).toMatch(/store unavailable: SQLite store unavailable \(SQLITE_CORRUPT/);
  });

  it('writes the file refuses (SQLITE_READONLY, as on a filesystem gone read-only) make readiness 503 until a write goes through again', async () => {
    const { db } = tempDatabase();
    const h = await hostOn(db);
    expect(await h.ready()).toBe(200);
    // Reads still answer, so a probe read alone would call the store ready while it issues nothing.
    db.pragma('query_only = 1');
    expect((await h.token()).status).toBe(503);
    expect(await h.ready()).toBe(503);
    expect(await h.ready()).toBe(503);
    // The file takes writes again: readiness finds it out by itself (its probe write), with no token request needed.
    db.pragma('query_only = 0');
    expect(await h.ready()).toBe(200);
    expect((await h.token()).status).toBe(200);
  });

  it('a full disk (SQLITE_FULL) leaves readiness as it was: reads serve, and writes resume by themselves once there is room', async () => {
    const { db } = tempDatabase();
    const h = await hostOn(db);
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const answers = await Promise.all(Array.from({ length: 50 }, () => h.token()));
    expect(answers.some((res) => res.status === 503)).toBe(true);
    expect(await h.ready()).toBe(200);
    db.pragma('max_page_count = 4294967294');
    expect((await h.token()).status).toBe(200);
  });
});
