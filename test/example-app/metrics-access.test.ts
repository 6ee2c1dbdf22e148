// The example app's /metrics (this machine only, or METRICS_TOKEN) and /health/* routes, over real connections.
import { networkInterfaces } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from 'express-oauth-router/stores/memory';
import { createApp, type AppOptions } from '../../example-app/app.js';
import { createDemoUserAuth } from '../../example-app/users.js';
import { parseMetricsAccess, type MetricsAccess } from '../../example-app/metrics-access.js';
import { startAppProcess, stopAppProcesses } from '../helpers/example-app-processes.js';
import { parseScrape } from '../helpers/prometheus-text.js';

const TOKEN = 'metrics-token-of-the-test-0123456789';
/** An address of this machine that is not loopback: a connection to it comes from a non-local address. */
const outside = Object.values(networkInterfaces()).flat()
  .find((entry) => entry && !entry.internal && entry.family === 'IPv4')?.address;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((done) => { server.closeAllConnections(); server.close(done); });
});
afterAll(() => stopAppProcesses());

async function exampleApp(metricsAccess?: MetricsAccess, extra: Partial<AppOptions> = {}) {
  const userAuth = await createDemoUserAuth({ username: 'demo', password: 'correct horse battery' });
  return createApp({
    store: createMemoryStore(), userAuth, authUrl: 'http://localhost:3000', sessionSecret: 'a-session-secret-of-32-characters',
    ...(metricsAccess ? { metricsAccess } : {}), ...extra,
  }).app;
}

/** Serves `app` on every interface and returns the base URL through `host`. */
async function listen(app: Awaited<ReturnType<typeof exampleApp>>, host: string): Promise<string> {
  const server = app.listen(0, '0.0.0.0');
  servers.push(server);
  await new Promise((done) => server.once('listening', done));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

describe('example app /metrics and /health', () => {
  it('METRICS_TOKEN and METRICS_LOCAL_ONLY: local only without a token, the token alone with one, both on request', () => {
    expect(parseMetricsAccess(undefined, undefined)).toEqual({ token: null, localOnly: true });
    expect(parseMetricsAccess(TOKEN, undefined)).toEqual({ token: TOKEN, localOnly: false });
    expect(parseMetricsAccess(TOKEN, 'true')).toEqual({ token: TOKEN, localOnly: true });
    expect(parseMetricsAccess(undefined, 'false')).toEqual({ token: null, localOnly: false });
    expect(() => parseMetricsAccess(undefined, 'yes')).toThrow(TypeError);
    expect(() => parseMetricsAccess('short', undefined)).toThrow(TypeError);
  });

  it('by default /metrics is served to this machine, in the Prometheus text format', async () => {
    const app = await exampleApp();
    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(parseScrape(res.text).labelSets('oauth_tokens_issued_total').length).toBeGreaterThan(0);
  });

  it.skipIf(!outside)('by default /metrics is refused to a connection from another address', async () => {
    const base = await listen(await exampleApp(), outside!);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain('oauth_');
  });

  it('a request a proxy on this machine forwarded is not taken for a local one, with or without TRUST_PROXY', async () => {
    expect((await request(await exampleApp()).get('/metrics').set('X-Forwarded-For', '203.0.113.7')).status).toBe(403);
    expect((await request(await exampleApp()).get('/metrics').set('Forwarded', 'for=203.0.113.7')).status).toBe(403);
    const proxied = await exampleApp(undefined, { trustProxy: 1 });
    expect((await request(proxied).get('/metrics').set('X-Forwarded-For', '203.0.113.7')).status).toBe(403);
    expect((await request(proxied).get('/metrics')).status).toBe(200);
  });

  it('with a token, /metrics needs it (401 with a Bearer challenge without it) and serves it from anywhere', async () => {
    const app = await exampleApp({ token: TOKEN, localOnly: false });
    const missing = await request(app).get('/metrics');
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect((await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`)).status).toBe(401);
    expect((await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).status).toBe(200);
    if (outside) {
      const base = await listen(app, outside);
      expect((await fetch(`${base}/metrics`)).status).toBe(401);
      expect((await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    }
  });

  it('/health/ready and /health/live answer 200 JSON to anyone', async () => {
    const app = await exampleApp();
    const ready = await request(app).get('/health/ready').set('X-Forwarded-For', '203.0.113.7');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { store: { status: 'ok' } } });
    const live = await request(app).get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
  });

  it('the started server reads METRICS_TOKEN and serves the process metrics next to the router\'s', { timeout: 30_000 }, async () => {
    const started = await startAppProcess({ OAUTH_STORE: 'memory:', METRICS_TOKEN: TOKEN, DEMO_PASSWORD: 'a-demo-password' });
    expect((await fetch(`${started.base}/metrics`)).status).toBe(401);
    const res = await fetch(`${started.base}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const scrape = parseScrape(await res.text());
    expect(scrape.value('oauth_tokens_issued_total', { grant_type: 'client_credentials', issuer: `http://localhost:${started.port}` })).toBe(0);
    expect(scrape.labelSets('process_cpu_user_seconds_total')).toHaveLength(1);
    expect((await fetch(`${started.base}/health/live`)).status).toBe(200);
    expect((await fetch(`${started.base}/health/ready`)).status).toBe(200);
  });
});
