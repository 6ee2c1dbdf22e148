// Redis Cluster store: once a node answers again after a hang, calls for its slots are served, not timed out for ever.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { connectResilientRedisCluster, withDeadline, type ResilientRedisClusterConnection } from '../../src/stores/redis/connection.js';
import { createRedisStore, type RedisStore } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { backedOff, startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { until } from '../helpers/until.js';

// A cluster of its own (redis-server installed where OAUTH_TEST_REDIS_URL is set): nothing shared is cut off.
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!REDIS_URL) console.info('Redis Cluster outage recovery tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const TIMEOUT_MS = 500;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/**
 * A one-node cluster of the test's own (every slot on one master, so one proxy covers them all), a fault proxy in
 * front of it, and a cluster store reaching the node through the proxy (the node announces its own address).
 */
async function clusterStoreBehindProxy(warnings: string[] = []): Promise<{ store: RedisStore; proxy: FaultProxy; clientId: string }> {
  const { port, proxy } = await clusterNodeBehindProxy();
  const store = await createRedisStore({
    cluster: { rootNodes: [`redis://127.0.0.1:${proxy.port}`], nodeAddressMap: { [`127.0.0.1:${port}`]: { host: '127.0.0.1', port: proxy.port } } },
    commandTimeoutMs: TIMEOUT_MS, logger: { warn: (message) => warnings.push(message) },
  });
  cleanups.push(() => store.close());
  const { client } = buildClient();
  await store.clients.createClient(client);
  return { store, proxy, clientId: client.clientId };
}

/** The one-node cluster of clusterStoreBehindProxy and its fault proxy: the node's own port and the proxy. */
async function clusterNodeBehindProxy(): Promise<{ port: number; proxy: FaultProxy }> {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-cluster-outage-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  // A config file per port: a try that lost its port to another process may have written its own.
  const server = await startRedisServer((port) => [
    '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-announce-ip', '127.0.0.1', '--dir', dir,
  ], { cluster: true });
  cleanups.push(() => server.stop());
  const { port } = server;
  const admin = createClient({ url: `redis://127.0.0.1:${port}` });
  await admin.connect();
  await admin.sendCommand(['CLUSTER', 'ADDSLOTSRANGE', '0', '16383']);
  await until('cluster_state:ok', async () => /cluster_state:ok/.test(String(await admin.sendCommand(['CLUSTER', 'INFO']))));
  await admin.close();
  const proxy = await startFaultProxy({ host: '127.0.0.1', port });
  cleanups.push(() => proxy.close());
  return { port, proxy };
}

/** The one-node cluster of clusterNodeBehindProxy, and a resilient cluster connection (no store) through its proxy. */
async function clusterConnectionBehindProxy(): Promise<{ connection: ResilientRedisClusterConnection; proxy: FaultProxy }> {
  const { port, proxy } = await clusterNodeBehindProxy();
  const connection = await connectResilientRedisCluster({
    rootNodes: [`redis://127.0.0.1:${proxy.port}`], nodeAddressMap: { [`127.0.0.1:${port}`]: { host: '127.0.0.1', port: proxy.port } },
    timeoutMs: TIMEOUT_MS, logger: { warn() {} }, label: 'test',
  });
  cleanups.push(() => connection.close());
  return { connection, proxy };
}

/** Calls until one is served: how long that took and how many were refused (each a 503) meanwhile. */
async function untilServed(call: () => Promise<unknown>, giveUpMs: number): Promise<{ servedAfterMs: number; refused: number }> {
  const start = performance.now();
  let refused = 0;
  while (performance.now() - start < giveUpMs) {
    const served = await call().then(() => true, (err: unknown) => {
      expect(err).toBeInstanceOf(StoreUnavailableError);
      return false;
    });
    if (served) return { servedAfterMs: performance.now() - start, refused };
    refused += 1;
    // Refused at once (no offline queue) while a reconnection runs: let the event loop (and the proxy) turn.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { servedAfterMs: Infinity, refused };
}

describe.skipIf(!REDIS_URL)('Redis Cluster store after an outage ends', () => {
  it('a hang under steady calls (connections accepted, never answered): served within two command timeouts of its end, not never', { timeout: 15_000 }, async () => {
    const { store, proxy, clientId } = await clusterStoreBehindProxy();
    proxy.setMode('hang');
    // Calls go on through the hang, each refused: each one written to the hung connection kept its socket timeout
    // from ever firing, so node-redis never dropped it.
    const hung = performance.now();
    while (performance.now() - hung < 3 * TIMEOUT_MS) {
      await expect(store.clients.findClient(clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The hang ends for new connections only (a middlebox that lost the state of those it held).
    proxy.setMode('up');
    const { servedAfterMs, refused } = await untilServed(() => store.clients.findClient(clientId), 8 * TIMEOUT_MS);
    // Before: every call timed out, 20 s after the hang's end as at its start (the connection stayed the hung one).
    expect(servedAfterMs, `${refused} calls refused after the hang ended`).toBeLessThan(2 * TIMEOUT_MS);
  });

  it('a refused connection, for long enough to back off to seconds: the first call after it is served', { timeout: 45_000 }, async () => {
    const { store, proxy, clientId } = await clusterStoreBehindProxy();
    proxy.setMode('down');
    await expect(store.clients.findClient(clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
    // Reconnection attempts back off (50 ms, doubling to 2 s), the node's and the revocation feed's subscriber's
    // alike: once two refused attempts in a row come a second apart, every connection's next waits 2 s.
    const before = proxy.accepted;
    // Up to 30 s: the backoff's 3.2 s stretches when the machine runs many suites at once (once past 10 s in an outside run).
    await until('the reconnection backoff to reach a second', () => backedOff(proxy, before, 1000), { tries: 1200 });
    proxy.setMode('up');
    // node-redis's own loop would still be asleep: this call was refused at once ("The client is closed").
    expect(await store.clients.findClient(clientId)).not.toBeNull();
  });

  it('each outage is reported once, not only the first the process saw', { timeout: 15_000 }, async () => {
    const warnings: string[] = [];
    const { store, proxy, clientId } = await clusterStoreBehindProxy(warnings);
    for (let outage = 1; outage <= 2; outage += 1) {
      proxy.setMode('down');
      await expect(store.clients.findClient(clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
      proxy.setMode('up');
      expect((await untilServed(() => store.clients.findClient(clientId), 8 * TIMEOUT_MS)).servedAfterMs).toBeLessThan(Infinity);
      // node-redis tells of a node connection's first 'ready' only (node-ready), so the end of an outage was never
      // noticed after the first: the second went unreported.
      expect(warnings.filter((line) => /cluster connection lost/.test(line))).toHaveLength(outage);
    }
  });

  it('a call that comes while a node reconnection begun during the outage is under way waits for it, and for one begun after it fails: served once the node is back', { timeout: 15_000 }, async () => {
    const { connection, proxy } = await clusterConnectionBehindProxy();
    // The outage swallows connections: the attempt that the lost node connection's first call begins is never answered.
    proxy.setMode('hang');
    const node = (connection.cluster.masters[0] as unknown as { client: { destroy(): void } }).client;
    node.destroy();
    await until('the lost connection closed at the proxy', () => proxy.open === 0);
    const first = connection.reconnect('key', false);
    expect(first).not.toBeNull();
    first!.catch(() => undefined);
    await until('the attempt accepted into the hang', () => proxy.open === 1);
    // A second call for the node's slots comes; then the outage ends, resetting the attempt.
    const second = connection.reconnect('key', false);
    proxy.setMode('down');
    proxy.setMode('up');
    // Before: null while the attempt ran (the connection open, not ready), so the command went out at once and was
    // refused: "The client is offline".
    expect(second).not.toBeNull();
    await withDeadline(second!, TIMEOUT_MS);
    expect(await connection.cluster.sendCommand('key', false, ['GET', 'key'])).toBeNull();
    await expect(first).rejects.toThrow();
  });

  it('a close while a node connection is being made again leaves no connection open behind it', { timeout: 15_000 }, async () => {
    const { connection, proxy } = await clusterConnectionBehindProxy();
    // The node's connection is lost while the proxy forwards, then made again into a hang: its handshake gets no answer.
    const node = (connection.cluster.masters[0] as unknown as { client: { destroy(): void } }).client;
    node.destroy();
    await until('the lost connection closed at the proxy', () => proxy.open === 0);
    proxy.setMode('hang');
    const attempt = connection.reconnect('key', false);
    expect(attempt).not.toBeNull();
    attempt!.catch(() => undefined);
    await until('the new connection accepted', () => proxy.open === 1);
    await connection.close();
    // Before: the close cleared the attempt's handshake deadline and left its socket to the socket timeout (3 × 500 ms),
    // keeping a host that had let go of everything else alive, and the node's error came after the close.
    const closed = performance.now();
    await until('the attempt\'s connection closed', () => proxy.open === 0);
    expect(performance.now() - closed).toBeLessThan(TIMEOUT_MS);
  });
});
