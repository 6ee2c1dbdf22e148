// oauth.health: readiness (store reachable, signing keys loaded) and liveness handlers, through real HTTP.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import type { Store } from '../../src/stores/contract.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { OAuthRouter } from '../../src/types.js';
import { createOAuthMetrics, type OAuthMetrics } from '../../src/metrics/index.js';
import { ISSUER, createTestUserAuth } from '../helpers/app.js';
import { parseScrape } from '../helpers/prometheus-text.js';

const open: OAuthMetrics[] = [];
afterEach(() => {
  for (const metrics of open.splice(0)) metrics.close();
});

function hostApp(store: Store, options: Partial<OAuthRouterOptions> = {}): { app: express.Express; oauth: OAuthRouter } {
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} }, ...options,
  });
  const app = express();
  app.use(oauth.router);
  app.get('/health/ready', oauth.health.readiness);
  app.get('/health/live', oauth.health.liveness);
  return { app, oauth };
}

describe('health handlers', () => {
  it('readiness answers 200 JSON naming each check, with Cache-Control: no-store', async () => {
    const { app } = hostApp(createMemoryStore());
    const res = await request(app).get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { store: { status: 'ok' } } });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toContain('no-store');
  });

  it('with JWT access tokens, readiness also checks that the signing keys are loaded', async () => {
    const { app } = hostApp(createMemoryStore(), { accessTokenFormat: 'jwt' });
    const res = await request(app).get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { store: { status: 'ok' }, signing_keys: { status: 'ok' } } });
  });

  it('a store that fails makes readiness 503 naming the failing checks, never the error message; liveness stays 200', async () => {
    const store = createMemoryStore();
    const { app } = hostApp(store, { accessTokenFormat: 'jwt' });
    // A bug's error, not an outage (a closed store is one: 'unavailable'), whose message must not reach the answer.
    const bug = async (): Promise<never> => { throw new Error('the store is closed for a bug'); };
    store.clients.findClient = bug;
    store.keys.listSigningKeys = bug;
    const ready = await request(app).get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({
      status: 'not_ready', checks: { store: { status: 'fail', reason: 'error' }, signing_keys: { status: 'fail', reason: 'error' } },
    });
    expect(ready.text).not.toContain('closed');
    const live = await request(app).get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    expect(live.headers['cache-control']).toContain('no-store');
  });

  it('liveness makes no store call; concurrent readiness checks share one', async () => {
    const metrics = createOAuthMetrics();
    open.push(metrics);
    const { app, oauth } = hostApp(metrics.instrumentStore(createMemoryStore()));
    const findClientCalls = async () => parseScrape(await metrics.registry.metrics())
      .value('oauth_store_call_duration_seconds_count', { part: 'clients', method: 'findClient', outcome: 'ok' });
    for (let i = 0; i < 3; i += 1) expect((await request(app).get('/health/live')).status).toBe(200);
    expect(await findClientCalls()).toBe(0);
    const reports = await Promise.all(Array.from({ length: 5 }, () => oauth.health.check()));
    expect(reports.every((report) => report.status === 'ready')).toBe(true);
    expect(await findClientCalls()).toBe(1);
  });

  it('a timeout that is not a positive number is refused with a TypeError', async () => {
    const { oauth } = hostApp(createMemoryStore());
    await expect(oauth.health.check({ timeoutMs: 0 })).rejects.toThrow(TypeError);
  });
});

describe('readiness of a SQLite store whose file is removed or replaced under it', () => {
  /** A store on a file of its own in a fresh directory, and that directory's cleanup. */
  function sqliteHost(): { app: express.Express; file: string; cleanup: () => Promise<void> } {
    const dir = mkdtempSync(join(tmpdir(), 'readiness-sqlite-'));
    const file = join(dir, 'oauth.sqlite');
    const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
    return { app: hostApp(store).app, file, cleanup: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  }

  it('the file removed: not ready (store unavailable), though reads of the open file still answer', async () => {
    const h = sqliteHost();
    try {
      expect((await request(h.app).get('/health/ready')).status).toBe(200);
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${h.file}${suffix}`, { force: true });
      const res = await request(h.app).get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not_ready', checks: { store: { status: 'fail', reason: 'unavailable' } } });
    } finally {
      await h.cleanup();
    }
  });

  it('its -wal removed (every write then answers 503 until a restart): not ready', async () => {
    const h = sqliteHost();
    try {
      // The -wal is there the whole time the store's connection is open, between writes too: a healthy store stays ready.
      for (let i = 0; i < 3; i += 1) expect((await request(h.app).get('/health/ready')).status).toBe(200);
      rmSync(`${h.file}-wal`);
      const res = await request(h.app).get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not_ready', checks: { store: { status: 'fail', reason: 'unavailable' } } });
    } finally {
      await h.cleanup();
    }
  });

  it('the path out of sight (its folder moved, a file at the folder\'s name: ENOTDIR, as EACCES for a folder made unreadable): not ready (store unavailable), not an error', async () => {
    const h = sqliteHost();
    const folder = dirname(h.file);
    try {
      renameSync(folder, `${folder}.moved`);
      writeFileSync(folder, '');
      const res = await request(h.app).get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not_ready', checks: { store: { status: 'fail', reason: 'unavailable' } } });
    } finally {
      rmSync(folder, { force: true });
      renameSync(`${folder}.moved`, folder);
      await h.cleanup();
    }
  });

  it('another file put at the path (a restore, the CLI creating a new store there): not ready until a restart opens it', async () => {
    const h = sqliteHost();
    try {
      const other = `${h.file}.restored`;
      const restored = createSqliteStore({ filename: other, sweepIntervalSeconds: 0 });
      await restored.close();
      renameSync(other, h.file);
      expect((await request(h.app).get('/health/ready')).status).toBe(503);
    } finally {
      await h.cleanup();
    }
  });
});
