// A database outage as metrics and health show it: store errors and 503s counted, not ready, still alive, ready again.
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pg from 'pg';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import type { Store } from '../../src/stores/contract.js';
import { createOAuthMetrics } from '../../src/metrics/index.js';
import { ISSUER, createTestUserAuth } from '../helpers/app.js';
import { parseScrape, type Scrape } from '../helpers/prometheus-text.js';
import { startFaultProxy } from '../stores/fault-proxy.js';

const PG_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!PG_URL || !REDIS_URL) {
  console.info('Store outage metrics tests skipped for the engines without OAUTH_TEST_POSTGRES_URL / OAUTH_TEST_REDIS_URL');
}
const TIMEOUT_MS = 500;
const unique = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const silent = { warn: () => undefined, error: () => undefined };

const BACKENDS = [
  {
    name: 'PostgreSQL', url: PG_URL, defaultPort: 5432,
    open: (port: number): Promise<Store> => {
      const url = new URL(PG_URL);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return createPostgresStore({
        connectionString: url.toString(), schema: `oauth_metrics_${unique}`, queryTimeoutMs: TIMEOUT_MS, sweepIntervalSeconds: 0, logger: silent,
      });
    },
    async cleanup() {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "oauth_metrics_${unique}" CASCADE`);
      await admin.end();
    },
  },
  {
    name: 'Redis', url: REDIS_URL, defaultPort: 6379,
    open: (port: number): Promise<Store> => {
      const url = new URL(REDIS_URL);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return createRedisStore({ url: url.toString(), prefix: `oauth-metrics-${unique}:`, commandTimeoutMs: TIMEOUT_MS, logger: silent });
    },
    async cleanup() {
      const admin = createClient({ url: REDIS_URL });
      await admin.connect();
      for await (const keys of admin.scanIterator({ MATCH: `oauth-metrics-${unique}:*`, COUNT: 500 })) {
        if (keys.length) await admin.del(keys);
      }
      admin.destroy();
    },
  },
];

for (const backend of BACKENDS) {
  describe.skipIf(!backend.url)(`metrics and health while ${backend.name} goes down and comes back`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
      await backend.cleanup();
    });

    it('store errors and 503s are counted, readiness fails naming the store while liveness stays 200, and recovers', { timeout: 60_000 }, async () => {
      const target = new URL(backend.url);
      const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || backend.defaultPort) });
      cleanups.push(() => proxy.close());
      const rawStore = await backend.open(proxy.port);
      cleanups.push(async () => rawStore.close?.());
      const metrics = createOAuthMetrics();
      cleanups.push(async () => metrics.close());
      const logged: string[] = [];
      const oauth = createOAuthRouter(metrics.instrumentStore(rawStore), createTestUserAuth(new Set()), {
        issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn: () => undefined, error: (m: string) => void logged.push(m) },
      });
      metrics.observe(oauth);
      const app = express();
      app.use(oauth.router);
      app.get('/metrics', metrics.handler);
      app.get('/health/ready', oauth.health.readiness);
      app.get('/health/live', oauth.health.liveness);
      const server: Server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

      const { client, clientSecret } = await registerClient(rawStore, { name: 'Nightly sync', flow: 'client_credentials' });
      const basic = `Basic ${Buffer.from(`${client.clientId}:${clientSecret}`).toString('base64')}`;
      const token = async (): Promise<number> => (await fetch(`${base}/oauth2/token`, {
        method: 'POST', headers: { Authorization: basic, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      })).status;
      const health = async (path: string): Promise<{ status: number; body: unknown; cacheControl: string | null }> => {
        const res = await fetch(`${base}${path}`);
        return { status: res.status, body: await res.json(), cacheControl: res.headers.get('cache-control') };
      };
      const scrape = async (): Promise<Scrape> => parseScrape(await (await fetch(`${base}/metrics`)).text());
      // A token request fails at its first store call: findClient, or with an integration copy (PostgreSQL,
      // Redis) saveTokens.
      const storeErrors = (s: Scrape): number => s.value('oauth_store_errors_total', { part: 'clients', method: 'findClient', reason: 'unavailable' })
        + s.value('oauth_store_errors_total', { part: 'tokens', method: 'saveTokens', reason: 'unavailable' });
      const unavailable = (s: Scrape): number => s.value('oauth_errors_total', { endpoint: 'token', error: 'temporarily_unavailable', status: '503' });

      // Up: a load of token requests, all served; ready and alive.
      expect(await Promise.all(Array.from({ length: 10 }, token))).toEqual(Array(10).fill(200));
      expect(await health('/health/ready')).toEqual({ status: 200, body: { status: 'ready', checks: { store: { status: 'ok' } } }, cacheControl: expect.stringContaining('no-store') });
      const up = await scrape();
      expect(up.value('oauth_tokens_issued_total', { grant_type: 'client_credentials', issuer: ISSUER })).toBe(10);
      expect(up.value('oauth_store_call_duration_seconds_count', { part: 'tokens', method: 'saveTokens', outcome: 'ok' })).toBe(10);
      expect(storeErrors(up)).toBe(0);

      // Down: every token request is a 503 counted once, every failed store call once; not ready, still alive.
      proxy.setMode('down');
      const statuses = await Promise.all(Array.from({ length: 8 }, token));
      expect(statuses).toEqual(Array(8).fill(503));
      const ready = await health('/health/ready');
      expect(ready).toEqual({
        status: 503, body: { status: 'not_ready', checks: { store: { status: 'fail', reason: 'unavailable' } } }, cacheControl: expect.stringContaining('no-store'),
      });
      expect(await health('/health/live')).toEqual({ status: 200, body: { status: 'ok' }, cacheControl: expect.stringContaining('no-store') });
      const down = await scrape();
      expect(unavailable(down) - unavailable(up)).toBe(8);
      // Eight token requests and one readiness probe, each one store call that failed.
      expect(storeErrors(down) - storeErrors(up)).toBe(9);
      expect(down.value('oauth_token_request_duration_seconds_count', { grant_type: 'client_credentials', outcome: 'error' })).toBe(8);
      expect(down.value('oauth_tokens_issued_total', { grant_type: 'client_credentials', issuer: ISSUER })).toBe(10);
      // Eight 503s, counted each by the metrics above, are one log line: an outage under load is not a line per request.
      expect(logged.filter((line) => line.includes('store unavailable'))).toHaveLength(1);

      const readyAgain = async (): Promise<void> => {
        let back = await health('/health/ready');
        // The driver reconnects on its own schedule: poll (bounded) until the store answers again.
        for (let attempt = 0; attempt < 100 && back.status !== 200; attempt += 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          back = await health('/health/ready');
        }
        expect(back).toEqual({ status: 200, body: { status: 'ready', checks: { store: { status: 'ok' } } }, cacheControl: expect.stringContaining('no-store') });
      };
      // Back: ready again once the store answers.
      proxy.setMode('up');
      await readyAgain();

      // Hanging on a live connection: a check slower than its timeout fails as a timeout, then recovers.
      proxy.setMode('hang');
      expect(await oauth.health.check({ timeoutMs: 50 })).toEqual({ status: 'not_ready', checks: { store: { status: 'fail', reason: 'timeout' } } });
      proxy.setMode('up');
      await readyAgain();
      expect(await token()).toBe(200);
    });
  });
}
