// requireBearer's token cache is exact: a token it served from memory is refused on the very next request after a revocation by any path.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REDIRECT_URI, USER, basic, createTestApp, createTestRouter, type TestApp } from '../helpers/app.js';
import { listen, openConnection, type RawConnection } from '../helpers/raw-http.js';
import { runCli } from '../helpers/run-cli.js';
import { clientCredentialsToken, codeTokens, revoke } from '../helpers/token-requests.js';
import { codeGrant, expectRefused, me } from '../helpers/bearer-cache.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { combineStores } from '../../src/stores/combine-stores.js';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { deleteOAuthClient } from '../../src/clients/delete-client.js';
import { disableClient } from '../../src/clients/disable-client.js';
import { rotateClientSecret } from '../../src/clients/rotate-client-secret.js';
import { withdrawConsent } from '../../src/consents/withdraw-consent.js';
import type { RevocationFeed, Store } from '../../src/stores/contract.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { UncaughtReport } from './bearer-cache-uncaught-worker.js';

/** A store whose access-token lookups are counted, feed and all other parts untouched. */
interface Counted {
  readonly store: Store;
  lookups(): number;
}

/** `feed`: the store's own by default; `null` for none. */
function counted(inner: Store, feed: RevocationFeed | null = inner.revocations ?? null): Counted {
  let lookups = 0;
  const { revocations: _dropped, ...rest } = inner;
  const store: Store = {
    ...rest,
    ...(feed ? { revocations: feed } : {}),
    tokens: {
      ...inner.tokens,
      findAccessToken(tokenHash) {
        lookups += 1;
        return inner.tokens.findAccessToken(tokenHash);
      },
    },
  };
  return { store, lookups: () => lookups };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh SQLite file's path in a temp directory removed after the test. */
function tempSqliteFile(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'oauth.sqlite');
}

/** A host's own better-sqlite3 connection to a fresh file, closed after the test. */
function hostDatabase(name: string): Database.Database {
  const db = new Database(tempSqliteFile(name));
  cleanups.push(() => { db.close(); });
  return db;
}

/**
 * A SQLite store on a fresh file with a host app and a token it issued, a second router on the same store (its own
 * bearer cache, the store's one data_version watch), and another connection to the file, as another process has.
 */
async function sqliteWithOtherConnection(name: string) {
  const file = tempSqliteFile(name);
  const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  cleanups.push(() => store.close());
  const t = await createTestApp({}, store);
  const token = await clientCredentialsToken(t.app, t.credentialsClient);
  const oauth = createTestRouter(store);
  const other = new Database(file);
  cleanups.push(() => { other.close(); });
  return { store, t, token, oauth, other };
}

/** A host on a counted store of `engine`; for SQLite, also the file other processes and instances open. */
async function host(engine: 'memory' | 'sqlite', options: Partial<OAuthRouterOptions> = {}): Promise<TestApp & Counted & { file: string }> {
  let file = '';
  let inner: Store;
  if (engine === 'memory') {
    inner = createMemoryStore();
  } else {
    file = tempSqliteFile('bearer-cache');
    inner = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  }
  cleanups.push(() => inner.close?.());
  const count = counted(inner);
  const app = await createTestApp(options, count.store);
  return { ...app, ...count, file };
}


/** Uses the token twice and proves the second use came from the cache, not the store. */
async function useUntilCached(h: TestApp & Counted, token: string): Promise<void> {
  expect((await me(h.app, token)).status).toBe(200);
  const before = h.lookups();
  expect((await me(h.app, token)).status).toBe(200);
  expect(h.lookups(), 'the second use is served from the cache').toBe(before);
}

// Opaque tokens, and JWTs under jwt.checkRevocation, which go through the same cache (RFC 9068 §4).
const FORMATS = [['memory', 'opaque'], ['sqlite', 'opaque'], ['memory', 'jwt'], ['sqlite', 'jwt']] as const;
describe.each(FORMATS)('requireBearer cache on the %s store, %s access tokens (RFC 6750 §3.1, RFC 7009 §2.1)', (engine, format) => {
  const base: Partial<OAuthRouterOptions> = format === 'jwt' ? { accessTokenFormat: 'jwt', jwt: { checkRevocation: true } } : {};
  it('a cached token revoked at the revocation endpoint (RFC 7009) is refused on the next request', async () => {
    const h = await host(engine, base);
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    expect((await revoke(h.app, h.credentialsClient, { token })).status).toBe(200);
    await expectRefused(h, token);
  });

  it('a cached token whose grant a replayed code revoked (RFC 6749 §4.1.2) is refused on the next request', async () => {
    const h = await host(engine, base);
    const { code, accessToken } = await codeGrant(h);
    await useUntilCached(h, accessToken);
    const replay = await request(h.app).post('/oauth2/token').set('Authorization', basic(h.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    expect(replay.body.error).toBe('invalid_grant');
    await expectRefused(h, accessToken);
  });

  it('a cached token of a withdrawn consent is refused on the next request', async () => {
    const h = await host(engine, base);
    const { accessToken } = await codeGrant(h);
    await useUntilCached(h, accessToken);
    await withdrawConsent(h.store, USER.id, h.codeClient.clientId);
    await expectRefused(h, accessToken);
  });

  it('a cached token of an integration disabled in this process is refused on the next request', async () => {
    const h = await host(engine, base);
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    expect(await disableClient(h.store, h.credentialsClient.clientId)).toBe(true);
    await expectRefused(h, token);
  });

  it('a cached token of an integration whose secret was rotated in this process is refused on the next request', async () => {
    const h = await host(engine, base);
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    expect(await rotateClientSecret(h.store, h.credentialsClient.clientId)).toEqual(expect.any(String));
    await expectRefused(h, token);
  });

  it('a cached token of an integration deleted in this process is refused on the next request', async () => {
    const h = await host(engine, base);
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    await deleteOAuthClient(h.store, h.credentialsClient.clientId);
    await expectRefused(h, token);
  });

  it('a cached token of an integration whose tokens the admin API revoked ({ clientId }) is refused on the next request', async () => {
    const h = await host(engine, base);
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    await createOAuthAdmin(h.store).revokeTokens({ clientId: h.credentialsClient.clientId });
    await expectRefused(h, token);
  });

  it('a cached token of a user the admin API revoked at one integration ({ clientId, userId }) is refused on the next request', async () => {
    const h = await host(engine, base);
    const { accessToken } = await codeGrant(h);
    await useUntilCached(h, accessToken);
    await createOAuthAdmin(h.store).revokeTokens({ clientId: h.codeClient.clientId, userId: USER.id });
    await expectRefused(h, accessToken);
  });

  it('cached tokens of a user the admin API revoked at every integration ({ userId }) are refused on the next request', async () => {
    const h = await host(engine, base);
    const atCode = await codeTokens(h.app, h.codeClient);
    const atLegacy = await codeTokens(h.app, h.legacyCodeClient, '/legacy');
    const machine = await clientCredentialsToken(h.app, h.credentialsClient);
    for (const token of [atCode.accessToken, atLegacy.accessToken, machine]) await useUntilCached(h, token);
    await createOAuthAdmin(h.store).revokeTokens({ userId: USER.id });
    await expectRefused(h, atCode.accessToken);
    await expectRefused(h, atLegacy.accessToken);
    expect((await me(h.app, machine)).status, 'a client_credentials token has no user').toBe(200);
  });

  it('revoking one token drops the whole cache, and other live tokens are verified again, not refused', async () => {
    const h = await host(engine, base);
    const kept = await clientCredentialsToken(h.app, h.credentialsClient);
    const revoked = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, kept);
    await useUntilCached(h, revoked);
    expect((await revoke(h.app, h.credentialsClient, { token: revoked })).status).toBe(200);
    const before = h.lookups();
    expect((await me(h.app, kept)).status).toBe(200);
    expect(h.lookups()).toBe(before + 1);
    await expectRefused(h, revoked);
  });

  it('bearerCache: { maxEntries } bounds the cache: the oldest token out is looked up again', async () => {
    const h = await host(engine, { ...base, bearerCache: { maxEntries: 1 } });
    const first = await clientCredentialsToken(h.app, h.credentialsClient);
    const second = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, first);
    await useUntilCached(h, second);
    const before = h.lookups();
    expect((await me(h.app, first)).status).toBe(200);
    expect(h.lookups()).toBe(before + 1);
  });

  it('with bearerCache: false every request is looked up in the store', async () => {
    const h = await host(engine, { ...base, bearerCache: false });
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    const before = h.lookups();
    for (let i = 0; i < 3; i += 1) expect((await me(h.app, token)).status).toBe(200);
    expect(h.lookups()).toBe(before + 3);
  });
});

describe('requireBearer cache on a SQLite file that other processes and instances write (PRAGMA data_version)', () => {
  it('a cached token of an integration disabled by oauth-admin in another process is refused on the next request', async () => {
    const h = await host('sqlite');
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    const result = await runCli(h.file, ['clients', 'disable', h.credentialsClient.clientId]);
    expect(result.code, result.stderr).toBe(0);
    await expectRefused(h, token);
  });

  it('a cached token of an integration whose secret oauth-admin rotated in another process is refused on the next request', async () => {
    const h = await host('sqlite');
    const { accessToken } = await codeGrant(h);
    await useUntilCached(h, accessToken);
    const result = await runCli(h.file, ['clients', 'rotate-secret', h.codeClient.clientId]);
    expect(result.code, result.stderr).toBe(0);
    await expectRefused(h, accessToken);
  });

  it('a cached token of an integration oauth-admin deleted in another process is refused on the next request', async () => {
    const h = await host('sqlite');
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    const result = await runCli(h.file, ['clients', 'delete', h.credentialsClient.clientId, '--yes']);
    expect(result.code, result.stderr).toBe(0);
    await expectRefused(h, token);
  });

  it('a cached token of an integration whose tokens oauth-admin revoked in another process (--client) is refused on the next request', async () => {
    const h = await host('sqlite');
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    const result = await runCli(h.file, ['tokens', 'revoke', '--client', h.credentialsClient.clientId]);
    expect(result.code, result.stderr).toBe(0);
    await expectRefused(h, token);
  });

  it('a cached token of a user oauth-admin revoked at one integration in another process (--client --user) is refused on the next request', async () => {
    const h = await host('sqlite');
    const { accessToken } = await codeGrant(h);
    await useUntilCached(h, accessToken);
    const result = await runCli(h.file, ['tokens', 'revoke', '--client', h.codeClient.clientId, '--user', USER.id]);
    expect(result.code, result.stderr).toBe(0);
    await expectRefused(h, accessToken);
  });

  it('cached tokens of a user oauth-admin revoked at every integration in another process (--user) are refused on the next request', async () => {
    const h = await host('sqlite');
    const atCode = await codeTokens(h.app, h.codeClient);
    const atLegacy = await codeTokens(h.app, h.legacyCodeClient, '/legacy');
    for (const token of [atCode.accessToken, atLegacy.accessToken]) await useUntilCached(h, token);
    const result = await runCli(h.file, ['tokens', 'revoke', '--user', USER.id]);
    expect(result.code, result.stderr).toBe(0);
    await expectRefused(h, atCode.accessToken);
    await expectRefused(h, atLegacy.accessToken);
  });

  it('a cached token revoked at a second router instance on the same file is refused on the next request', async () => {
    const h = await host('sqlite');
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    const second = createSqliteStore({ filename: h.file, sweepIntervalSeconds: 0 });
    cleanups.push(() => second.close());
    const other = await createTestApp({}, second);
    expect((await revoke(other.app, h.credentialsClient, { token })).status).toBe(200);
    await expectRefused(h, token);
  });
});

describe('requireBearer cache on SQLite: the data_version read of one event-loop turn', () => {
  /**
   * The read is shared by the rest of its turn only when it was made while Node's HTTP server dispatched the
   * request it checks: every request handled later in that turn was received before it. A check that a host
   * deferred (here with setImmediate, as express-session's MemoryStore defers its callbacks) runs in the
   * check phase, and a request read in the next poll phase may have been sent after a commit that read missed.
   */
  it('two requests parsed from one socket read are checked in turn: the second, checked after the first is answered, reads data_version again', async () => {
    const db = hostDatabase('bearer-cache-turn');
    // Counts the store's data_version reads; every other statement as better-sqlite3 made it.
    let reads = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (sql.includes('data_version')) {
        const get = statement.get.bind(statement);
        statement.get = ((...args: unknown[]) => { reads += 1; return get(...args); }) as typeof statement.get;
      }
      return statement;
    }) as typeof db.prepare;
    const store = createSqliteStore(db, { sweepIntervalSeconds: 0 });
    cleanups.push(() => store.close());
    const t = await createTestApp({}, store);
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const server = await listen(t.app);
    cleanups.push(() => server.close());
    const use = () => fetch(`http://127.0.0.1:${server.port}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect((await use()).status).toBe(200); // looked up and cached
    const connection = await openConnection(server.port);
    cleanups.push(() => connection.close());
    const before = reads;
    // Pipelined in one write: Node's parser dispatches both in the same callback. The second waits for the first's
    // answer (RFC 9112 §9.3.2: a request ahead may be a revocation), so its check runs later, outside the dispatch,
    // where a read stands for its own call only: a commit made meanwhile by another connection is seen.
    const one = `GET /api/v1/me HTTP/1.1\r\nHost: auth.test\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    connection.send(one + one);
    expect((await connection.responses(2)).statusLines).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    expect(reads - before, 'data_version reads for two pipelined checks, one after the other').toBe(2);
  });

  const READERS = [
    ['a bearer check a host deferred with setImmediate', 'bearer'],
    ['the client lookup of a token request resumed in the check phase', 'client'],
  ] as const;
  it.each(READERS)('a data_version read by %s does not stand for the requests of the next poll phase', async (_label, reader) => {
    const { store, t, token, oauth: deferring, other } = await sqliteWithOtherConnection('bearer-cache-phases');
    let direct: RawConnection | null = null;
    /** Still in the check phase, right after the read: another connection revokes the token, then a request
     * using it is written, for the next poll phase to read. */
    const revokeThenUse = (): void => {
      other.prepare('DELETE FROM tokens WHERE token_hash = ?').run(hashToken(token));
      direct!.send(`GET /api/v1/me HTTP/1.1\r\nHost: auth.test\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    };
    const host = express();
    if (reader === 'bearer') {
      host.get('/check-phase', (_req, _res, next) => { setImmediate(next); }, deferring.requireBearer(), (_req, res) => {
        revokeThenUse();
        res.json({ read: reader });
      });
    } else {
      host.get('/check-phase', (_req, res) => {
        setImmediate(() => {
          void store.clients.findClient(t.credentialsClient.clientId); // reads data_version before it returns
          revokeThenUse();
          res.json({ read: reader });
        });
      });
    }
    host.use(t.app);
    const server = await listen(host);
    cleanups.push(() => server.close());
    const connection = await openConnection(server.port);
    direct = connection;
    cleanups.push(() => connection.close());
    const use = (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`, { headers: { authorization: `Bearer ${token}` } });
    // Cached by the direct route's router, then the check-phase read.
    expect((await use('/api/v1/me')).status).toBe(200);
    expect((await use('/api/v1/me')).status).toBe(200);
    expect((await use('/check-phase')).status).toBe(200);
    expect((await connection.responses(1)).statusLines).toEqual(['HTTP/1.1 401 Unauthorized']);
  });
});

describe('requireBearer cache on SQLite: one poll phase that polls more than once', () => {
  /**
   * libuv's poll phase takes at most 1,024 ready sockets from one epoll_wait; when it gets that many it polls again
   * at once, in the same phase, up to 48 times. A request of such a later poll may have been sent after a commit that a
   * read made during an earlier one missed, so a read stands only for the I/O callback it was made in (an outside
   * audit: with 6,000 connections, tokens revoked by another instance were served for 4-5 s).
   */
  it('a token revoked after the read of the phase\'s first poll is refused to a request its next poll reads', async () => {
    const { token, oauth, other } = await sqliteWithOtherConnection('bearer-cache-repoll');
    const request = `GET /checked HTTP/1.1\r\nHost: auth.test\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    let probe: Socket | null = null;
    let revoked = false;
    const host = express();
    host.get('/checked', oauth.requireBearer(), (_req, res) => {
      // The first request of the first poll: its check has read data_version. Another connection revokes the token,
      // then a request using it is sent, which the phase's next poll reads.
      if (!revoked && probe) {
        revoked = true;
        other.prepare('DELETE FROM tokens WHERE token_hash = ?').run(hashToken(token));
        probe.write(request);
      }
      res.json({ ok: true });
    });
    const server = await listen(host);
    cleanups.push(() => server.close());
    const open = (): Promise<Socket> => new Promise((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
      socket.once('error', reject);
      socket.on('data', () => {});
    });
    // More connections than one epoll_wait returns, each with a request ready before the phase starts.
    const sockets = await Promise.all(Array.from({ length: 1100 }, open));
    cleanups.push(() => { for (const socket of sockets) socket.destroy(); });
    const probeSocket = await open();
    cleanups.push(() => { probeSocket.destroy(); });
    const answers: string[] = [];
    probeSocket.on('data', (chunk: Buffer) => { answers.push(chunk.toString('latin1').split('\r\n')[0]!); });
    // Cached (looked up, then served from the cache).
    for (let i = 0; i < 2; i += 1) {
      const res = await fetch(`http://127.0.0.1:${server.port}/checked`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
    }
    // Let the server accept every connection before the requests go out together.
    await new Promise((resolve) => setTimeout(resolve, 200));
    probe = probeSocket;
    for (const socket of sockets) socket.write(request);
    await expect.poll(() => answers.length, { timeout: 10_000 }).toBe(1);
    expect(answers).toEqual(['HTTP/1.1 401 Unauthorized']);
  }, 30_000);
});

describe('requireBearer cache on SQLite: a host listener that throws to an uncaughtException handler', () => {
  /**
   * When a 'request' listener throws and the process goes on, Node ends that I/O callback without running the ticks
   * it queued until the next callback ends, so a read cannot rely on its tick alone to end with its callback: it
   * stands only for the connection it was made for.
   */
  it('a token revoked after the throwing request\'s read is refused to every other connection\'s request', async () => {
    const worker = fileURLToPath(new URL('./bearer-cache-uncaught-worker.ts', import.meta.url));
    const child = fork(worker, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    cleanups.push(() => { child.kill(); });
    const report = await new Promise<UncaughtReport>((resolve, reject) => {
      child.once('message', (message) => resolve(message as UncaughtReport));
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before reporting`)));
    });
    expect(report.thrown).toBe(1);
    expect(report.statusLines).toHaveLength(21);
    // The request that revoked was checked before the revocation; every other one after it.
    expect(report.statusLines.filter((line) => line === 'HTTP/1.1 200 OK')).toHaveLength(1);
    expect(report.statusLines.filter((line) => line === 'HTTP/1.1 401 Unauthorized')).toHaveLength(20);
  }, 30_000);
});

describe('requireBearer cache on two SQLite stores sharing the host\'s one Database', () => {
  it('a revocation through the other store object on the same connection is refused on the next request', async () => {
    const db = hostDatabase('bearer-cache-shared');
    const serving = createSqliteStore(db, { sweepIntervalSeconds: 0 });
    const revoking = createSqliteStore(db, { sweepIntervalSeconds: 0 });
    cleanups.push(() => serving.close());
    cleanups.push(() => revoking.close());
    const count = counted(serving);
    const h = { ...(await createTestApp({}, count.store)), ...count };
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    await useUntilCached(h, token);
    await revoking.tokens.revokeAccessToken(hashToken(token));
    await expectRefused(h, token);
  });
});

describe('the bearerCache option', () => {
  it.each([['yes'], [{ maxEntries: 0 }], [{ maxEntries: 1.5 }], [{ size: 10 }], [null]])('bearerCache %j is refused at start-up, naming the option', async (value) => {
    await expect(createTestApp({ bearerCache: value as never })).rejects.toThrow(/bearerCache/);
  });
});

describe('requireBearer without a revocation feed', () => {
  it('a store without store.revocations is looked up on every request', async () => {
    const inner = createMemoryStore();
    cleanups.push(() => inner.close?.());
    const count = counted(inner, null);
    expect(count.store.revocations).toBeUndefined();
    const h = { ...(await createTestApp({}, count.store)), ...count };
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    const before = h.lookups();
    for (let i = 0; i < 3; i += 1) expect((await me(h.app, token)).status).toBe(200);
    expect(h.lookups()).toBe(before + 3);
  });

  it('a feed that cannot vouch (mark() is null: its connection is down) means a lookup on every request', async () => {
    const inner = createMemoryStore();
    cleanups.push(() => inner.close?.());
    const count = counted(inner, { mark: () => null });
    const h = { ...(await createTestApp({}, count.store)), ...count };
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    const before = h.lookups();
    for (let i = 0; i < 3; i += 1) expect((await me(h.app, token)).status).toBe(200);
    expect(h.lookups()).toBe(before + 3);
    await inner.tokens.revokeAccessToken(hashToken(token));
    await expectRefused(h, token);
  });

  it('a feed whose mark() throws (a custom store\'s bug) means a lookup on every request, never a 500, and one log line', async () => {
    const inner = createMemoryStore();
    cleanups.push(() => inner.close?.());
    const count = counted(inner, { mark: () => { throw new Error('injected mark bug'); } });
    const errors: string[] = [];
    const h = { ...(await createTestApp({ logger: { warn() {}, error(line: string) { errors.push(line); } } }, count.store)), ...count };
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    const before = h.lookups();
    for (let i = 0; i < 3; i += 1) expect((await me(h.app, token)).status).toBe(200);
    expect(h.lookups()).toBe(before + 3);
    await inner.tokens.revokeAccessToken(hashToken(token));
    const refused = await me(h.app, token);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(errors).toEqual([expect.stringMatching(/store\.revocations\.mark\(\) threw \(injected mark bug\); every bearer token is looked up/)]);
  });

  it('a feed whose mark() keeps throwing is logged again a minute later, even if the wall clock stepped back (NTP) meanwhile', async () => {
    const inner = createMemoryStore();
    cleanups.push(() => inner.close?.());
    const count = counted(inner, { mark: () => { throw new Error('injected mark bug'); } });
    const errors: string[] = [];
    const h = { ...(await createTestApp({ logger: { warn() {}, error(line: string) { errors.push(line); } } }, count.store)), ...count };
    const token = await clientCredentialsToken(h.app, h.credentialsClient);
    expect((await me(h.app, token)).status).toBe(200);
    // Ten minutes back on the wall clock while a minute passes.
    const real = { date: Date.now.bind(Date), monotonic: performance.now.bind(performance) };
    const wall = vi.spyOn(Date, 'now').mockImplementation(() => real.date() - 540_000);
    const monotonic = vi.spyOn(performance, 'now').mockImplementation(() => real.monotonic() + 60_001);
    cleanups.push(() => { wall.mockRestore(); monotonic.mockRestore(); });
    expect((await me(h.app, token)).status).toBe(200);
    expect(errors).toHaveLength(2);
  });

  it('combineStores takes the feed from the tokens store, so it tells of the revocations that matter', () => {
    const tokens = createMemoryStore();
    const clients = createMemoryStore();
    const combined = combineStores({ clients, codes: clients, tokens });
    expect(combined.revocations).toBe(tokens.revocations);
    const noFeed = counted(tokens, null).store;
    expect(combineStores({ clients, codes: clients, tokens: noFeed }).revocations).toBeUndefined();
  });
});
