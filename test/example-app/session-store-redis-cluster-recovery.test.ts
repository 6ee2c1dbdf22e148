// Example app's Redis Cluster sessions: once the cluster answers again after an outage, sessions are served, as tokens are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionStore, type AppSessionStore } from '../../example-app/session-store.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { backedOff, startFaultProxy, type FaultProxy } from '../stores/fault-proxy.js';
import { until } from '../helpers/until.js';
import { getSession, SESSION, setSession } from '../helpers/session-calls.js';

// A cluster of its own (redis-server installed where OAUTH_TEST_REDIS_URL is set): nothing shared is cut off.
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!REDIS_URL) console.info('Redis Cluster session recovery tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const TIMEOUT_MS = 500;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/**
 * A one-node cluster of the test's own (every slot on one master) that announces a fault proxy's port in front of it,
 * so a `redis+cluster://` URL naming the proxy reaches the node through it alone, and the app's sessions on it.
 */
async function clusterSessionsBehindProxy(): Promise<{ sessions: AppSessionStore; proxy: FaultProxy }> {
  // The proxy first, as the node announces its port; it forwards to the node's port, set once the node listens.
  const node = { host: '127.0.0.1', port: 0 };
  const proxy = await startFaultProxy(node);
  cleanups.push(() => proxy.close());
  const dir = mkdtempSync(join(tmpdir(), 'oauth-cluster-sessions-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  // A config file per port: a try that lost its port to another process may have written its own.
  const server = await startRedisServer((port) => [
    '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-announce-ip', '127.0.0.1', '--cluster-announce-port', String(proxy.port),
    '--dir', dir,
  ], { cluster: true });
  cleanups.push(() => server.stop());
  const { port } = server;
  node.port = port;
  const admin = createClient({ url: `redis://127.0.0.1:${port}` });
  await admin.connect();
  await admin.sendCommand(['CLUSTER', 'ADDSLOTSRANGE', '0', '16383']);
  await until('cluster_state:ok', async () => /cluster_state:ok/.test(String(await admin.sendCommand(['CLUSTER', 'INFO']))));
  await admin.close();
  const sessions = await createSessionStore(`redis+cluster://127.0.0.1:${proxy.port}?prefix=recovery:`, { timeoutMs: TIMEOUT_MS, logger: { warn: () => undefined } });
  cleanups.push(() => sessions.close());
  return { sessions, proxy };
}


describe.skipIf(!REDIS_URL)('example app Redis Cluster sessions after an outage ends', () => {
  it('a session read right after the cluster is back is served, though the connection was refused long enough to back off to seconds', { timeout: 45_000 }, async () => {
    const { sessions, proxy } = await clusterSessionsBehindProxy();
    await setSession(sessions, 'sid-1', SESSION);
    proxy.setMode('down');
    await expect(getSession(sessions, 'sid-1')).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    // Background reconnection attempts back off (50 ms, doubling to 2 s), each opening three connections here (the
    // node's and the cluster's discovery): once two refused attempts in a row come a second apart, the next waits 2 s.
    // Counting seven connections stopped after three attempts, 160 ms in, with the next only 400 ms away.
    const before = proxy.accepted;
    // Up to 30 s, as the store's own test: 3.2 s, longer when the machine runs many suites at once.
    await until('the reconnection backoff to reach a second', () => backedOff(proxy, before, 1000), { tries: 1200 });
    proxy.setMode('up');
    // Without an on-demand reconnect this read was refused at once ("The client is closed") until the backoff ended.
    expect(await getSession(sessions, 'sid-1')).toMatchObject({ cookie: { originalMaxAge: 60_000 } });
  });

  it('a hang under steady reads (connections accepted, never answered): served within two timeouts of its end, not never', { timeout: 15_000 }, async () => {
    const { sessions, proxy } = await clusterSessionsBehindProxy();
    await setSession(sessions, 'sid-1', SESSION);
    proxy.setMode('hang');
    // Reads go on through the hang, each refused: each one written to the hung connection kept its socket timeout
    // from ever firing, so node-redis never dropped it.
    const hung = performance.now();
    while (performance.now() - hung < 3 * TIMEOUT_MS) {
      await expect(getSession(sessions, 'sid-1')).rejects.toMatchObject({ name: 'StoreUnavailableError' });
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The hang ends for new connections only (a middlebox that lost the state of those it held).
    proxy.setMode('up');
    const resumed = performance.now();
    let refused = 0;
    while (performance.now() - resumed < 8 * TIMEOUT_MS) {
      if (await getSession(sessions, 'sid-1').then(() => true, () => false)) break;
      refused += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(performance.now() - resumed, `${refused} reads refused after the hang ended`).toBeLessThan(2 * TIMEOUT_MS);
  });
});
