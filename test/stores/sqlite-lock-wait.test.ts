// Another process holding the SQLite lock never freezes the server: other routes answer, store calls wait on a timer, then 503.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/crypto/hash-token.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { nextLockDelay } from '../../src/stores/sqlite/lock-wait.js';
import {
  createSqliteStore, sqliteLockWaitChannel, type SqliteLockWaitMessage, type SqliteStore,
} from '../../src/stores/sqlite/index.js';
import { buildClient, buildCode, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { LockHolder } from './sqlite-lock-holder-process.js';

/** The next attempt of any SQLite store in this process that meets a lock: a call is then known to be waiting. */
function nextLockWait(): Promise<SqliteLockWaitMessage> {
  return new Promise((resolve) => {
    const once = (message: unknown): void => {
      sqliteLockWaitChannel.unsubscribe(once);
      resolve(message as SqliteLockWaitMessage);
    };
    sqliteLockWaitChannel.subscribe(once);
  });
}

function clientCredentials(app: TestApp['app'], client: TestClient): Promise<request.Response> {
  return request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send({ grant_type: 'client_credentials' });
}

describe('a lock held by another process does not block the event loop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-lock-'));
  const file = join(dir, 'oauth.sqlite');
  const stores: SqliteStore[] = [];
  let patient: TestApp;
  let hasty: TestApp;
  let holder: LockHolder;
  let jwt: string;

  /** Rows the file holds for an integration, read through a connection of the test's own. */
  function tokenRows(clientId: string): number {
    const db = new Database(file, { fileMustExist: true });
    try {
      return db.prepare<[string], number>('SELECT count(*) FROM tokens WHERE client_id = ?').pluck().get(clientId)!;
    } finally {
      db.close();
    }
  }

  beforeAll(async () => {
    // A deadline no test reaches (so a success never races it), and one short enough to reach.
    const open = (lockTimeoutMs: number): SqliteStore => {
      const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0, lockTimeoutMs });
      stores.push(store);
      return store;
    };
    patient = await createTestApp({ accessTokenFormat: 'jwt' }, open(60_000));
    hasty = await createTestApp({}, open(20));
    // Also loads the signing key, so that nothing but the token save needs the store below.
    jwt = (await clientCredentials(patient.app, patient.credentialsClient)).body.access_token as string;
    holder = new LockHolder(file);
    await holder.ready();
  }, 30_000);

  afterAll(async () => {
    holder?.stop();
    for (const store of stores) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('while a token request waits for the lock, the metadata document, the JWKS and requireBearer on a JWT answer at once', async () => {
    await holder.lock();
    const waiting = nextLockWait();
    const token = clientCredentials(patient.app, patient.credentialsClient).then((res) => res);
    await waiting;

    // These answer while the other process still holds the lock: the release below has not been sent.
    const metadata = await request(patient.app).get('/.well-known/oauth-authorization-server');
    const jwks = await request(patient.app).get('/oauth2/jwks');
    const api = await request(patient.app).get('/api/v1/me').set('Authorization', `Bearer ${jwt}`);
    expect([metadata.status, jwks.status, api.status]).toEqual([200, 200, 200]);

    await holder.release();
    expect((await token).status).toBe(200);
  });

  it('a token request whose lock wait runs out answers 503 temporarily_unavailable, and issues nothing', async () => {
    const client = hasty.credentialsClient;
    const before = tokenRows(client.clientId);
    await holder.lock();
    const res = await clientCredentials(hasty.app, client);
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');
    expect(res.body).not.toHaveProperty('access_token');
    await holder.release();

    // The refused call is not written later: the next request is the only one saved.
    expect((await clientCredentials(hasty.app, client)).status).toBe(200);
    expect(tokenRows(client.clientId)).toBe(before + 1);
  });

  it('a token request that met the lock succeeds once it is released before the deadline, and its token is saved', async () => {
    await holder.lock();
    const waiting = nextLockWait();
    const token = clientCredentials(patient.app, patient.credentialsClient).then((res) => res);
    expect((await waiting).attempt).toBe(1);
    await holder.release();

    const res = await token;
    expect(res.status).toBe(200);
    expect(await stores[0]!.tokens.findAccessToken(hashToken(res.body.access_token as string))).not.toBeNull();
  });

  it('the group commit under a held lock: every save waits, then each is answered once with its own result, all written', async () => {
    const store = stores[0]!;
    const authorizedAt = new Date();
    const pairs = Array.from({ length: 8 }, () => buildTokenPair({ clientId: 'group-commit-client' }));
    const revoked = buildTokenPair({ clientId: 'group-commit-client' });
    await store.tokens.revokeGrant(revoked.access.grantId);
    await holder.lock();

    const waiting = nextLockWait();
    const first = pairs.slice(0, 4).map((p) => store.tokens.saveTokens(p.access, p.refresh, { authorizedAt }));
    const refused = store.tokens.saveTokens(revoked.access, revoked.refresh, { authorizedAt });
    expect((await waiting).calls).toBe(5);
    // Calls made while the batch waits join it.
    const later = pairs.slice(4).map((p) => store.tokens.saveTokens(p.access, p.refresh, { authorizedAt }));
    await holder.release();

    expect(await Promise.all([...first, refused, ...later])).toEqual([true, true, true, true, false, true, true, true, true]);
    expect(tokenRows('group-commit-client')).toBe(pairs.length * 2);
    for (const { access, refresh } of pairs) {
      expect(await store.tokens.findAccessToken(access.tokenHash)).toEqual(access);
      expect(await store.tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
    }
  });

  it('code consumes share the group commit with token saves: under a held lock they wait in one batch, and one consume of a code wins', async () => {
    const store = stores[0]!;
    const code = buildCode({ clientId: 'group-commit-client' });
    await store.codes.saveCode(code);
    const pair = buildTokenPair({ clientId: 'group-commit-client' });
    await holder.lock();

    const waiting = nextLockWait();
    const consumes = Array.from({ length: 3 }, () => store.codes.consumeCode(code.codeHash));
    const saved = store.tokens.saveTokens(pair.access, pair.refresh, { authorizedAt: new Date() });
    expect((await waiting).calls).toBe(4);
    await holder.release();

    const results = await Promise.all(consumes);
    expect(results.map((r) => r.kind)).toEqual(['consumed', 'replayed', 'replayed']);
    expect(results[0]).toEqual({ kind: 'consumed', record: code });
    expect(results[1]).toEqual({ kind: 'replayed', grantId: code.grantId, userId: code.userId, clientId: code.clientId });
    expect(await saved).toBe(true);
    expect(await store.codes.consumeCode(code.codeHash)).toEqual({ kind: 'replayed', grantId: code.grantId, userId: code.userId, clientId: code.clientId });
  });

  it('a code consume whose lock wait runs out is rejected with StoreUnavailableError and leaves the code unused', async () => {
    const store = stores[1]!;
    const code = buildCode({ clientId: 'hasty-client' });
    await store.codes.saveCode(code);
    await holder.lock();
    await expect(store.codes.consumeCode(code.codeHash)).rejects.toBeInstanceOf(StoreUnavailableError);
    await holder.release();

    expect(await store.codes.consumeCode(code.codeHash)).toEqual({ kind: 'consumed', record: code });
  });

  /** Expired rows seeded through the test's own connection, then how many of them the file still holds. */
  function seedExpired(prefix: string): () => number {
    const db = new Database(file, { fileMustExist: true });
    try {
      const past = Date.now() - 1000;
      db.transaction(() => {
        for (let i = 0; i < 450; i += 1) {
          db.prepare("INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at) VALUES (?, 'access', ?, ?, NULL, '', 'x', ?)")
            .run(`${prefix}-${i}`, `${prefix}-grant-${i}`, prefix, past);
        }
        db.prepare('INSERT INTO rate_limits (key, count, expires_at) VALUES (?, 1, ?)').run(`${prefix}-counter`, past);
      })();
    } finally {
      db.close();
    }
    return () => {
      const reader = new Database(file, { fileMustExist: true });
      try {
        return reader.prepare<[string], number>('SELECT count(*) FROM tokens WHERE client_id = ?').pluck().get(prefix)!
          + reader.prepare<[string], number>('SELECT count(*) FROM rate_limits WHERE key = ?').pluck().get(`${prefix}-counter`)!;
      } finally {
        reader.close();
      }
    };
  }

  // Several processes serving from one file hold the write lock about half the time under load: a sweep that gave
  // up at the first lock it met (as it did) never got past the tokens table, and expired rows piled up for good.
  it('a sweep that meets another process\'s lock waits for it like any call, then deletes every expired row', async () => {
    const left = seedExpired('sweep-waits');
    await holder.lock();
    const waiting = nextLockWait().then(() => 'waiting');
    const sweep = stores[0]!.sweepExpired().then(() => 'swept', (err: unknown) => err);
    try {
      expect(await Promise.race([waiting, sweep])).toBe('waiting');
    } finally {
      await holder.release();
    }

    expect(await sweep).toBe('swept');
    expect(left()).toBe(0);
  });

  it('a sweep whose lock wait runs out rejects with StoreUnavailableError, and the next one deletes what it left', async () => {
    const left = seedExpired('sweep-gives-up');
    await holder.lock();
    try {
      await expect(stores[1]!.sweepExpired()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await holder.release();
    }
    expect(left()).toBeGreaterThan(0);

    await stores[1]!.sweepExpired();
    expect(left()).toBe(0);
  });

  it('opening a current file needs no lock: a store opens at once while another process holds it', async () => {
    await holder.lock('EXCLUSIVE');
    try {
      const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0, lockTimeoutMs: 0 });
      stores.push(store);
      expect(await store.clients.findClient(patient.credentialsClient.clientId)).not.toBeNull();
    } finally {
      await holder.release();
    }
  });
});

describe('reads and migrations meeting a lock', () => {
  const dirs: string[] = [];
  const opened: Array<{ close(): unknown }> = [];
  const tempFile = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-lock-'));
    dirs.push(dir);
    return join(dir, 'oauth.sqlite');
  };

  afterEach(async () => {
    for (const handle of opened.splice(0).reverse()) await handle.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  // In WAL mode a writer never blocks a reader; a rollback journal's exclusive lock (a file another tool
  // switched back, a restore) does, and the read waits like a write.
  it('a read that meets an exclusive lock waits for it, then answers', async () => {
    const db = new Database(tempFile());
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0, lockTimeoutMs: 60_000 });
    opened.push(db, store);
    const { client } = buildClient();
    await store.clients.createClient(client);
    db.pragma('journal_mode = DELETE');
    const blocker = new Database(db.name);
    opened.push(blocker);
    blocker.exec('BEGIN EXCLUSIVE');

    const waiting = nextLockWait();
    const found = store.clients.findClient(client.clientId);
    await waiting;
    blocker.exec('ROLLBACK');
    expect(await found).toEqual(client);
  });

  it('a read whose lock wait runs out rejects with StoreUnavailableError', async () => {
    const db = new Database(tempFile());
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0, lockTimeoutMs: 20 });
    opened.push(db, store);
    db.pragma('journal_mode = DELETE');
    const blocker = new Database(db.name);
    opened.push(blocker);
    blocker.exec('BEGIN EXCLUSIVE');
    await expect(store.clients.listClients()).rejects.toBeInstanceOf(StoreUnavailableError);
    blocker.exec('ROLLBACK');
    expect(await store.clients.listClients()).toEqual([]);
  });

  it('opening a file that must be migrated while another connection holds its lock throws StoreUnavailableError once the wait runs out', () => {
    const file = tempFile();
    const blocker = new Database(file);
    opened.push(blocker);
    blocker.exec('BEGIN EXCLUSIVE');
    blocker.exec('CREATE TABLE other (x)');
    expect(() => createSqliteStore({ filename: file, lockTimeoutMs: 0 })).toThrow(StoreUnavailableError);
    blocker.exec('COMMIT');
    opened.push(createSqliteStore({ filename: file, sweepIntervalSeconds: 0, lockTimeoutMs: 0 }));
  });

  it('refuses a negative or non-finite lockTimeoutMs, naming the option', () => {
    expect(() => createSqliteStore({ filename: ':memory:', lockTimeoutMs: -1 })).toThrow(/lockTimeoutMs/);
    expect(() => createSqliteStore({ filename: ':memory:', lockTimeoutMs: Number.POSITIVE_INFINITY })).toThrow(/lockTimeoutMs/);
  });
});

describe('the lock wait schedule', () => {
  it('retries 1 ms apart for 20 attempts (another instance commits in short bursts), then backs off to 20 attempts a second, never past the deadline', () => {
    const delays = Array.from({ length: 30 }, (_, i) => nextLockDelay(i + 1, 5000));
    expect(delays.slice(0, 20)).toEqual(Array(20).fill(1));
    expect(delays.slice(20)).toEqual([2, 5, 10, 20, 50, 50, 50, 50, 50, 50]);
    expect(nextLockDelay(25, 7)).toBe(7);
    expect(nextLockDelay(3, 0.4)).toBe(0.4);
    expect(nextLockDelay(3, -1)).toBe(0);
  });
});
