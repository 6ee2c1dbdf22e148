// Redis store: once Redis answers again after an outage, calls are served at once, not refused for a reconnect backoff.
import { afterEach, describe, expect, it } from 'vitest';
import { connectResilientRedis, withDeadline } from '../../src/stores/redis/connection.js';
import { createRedisStore, type RedisStore } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { backedOff, startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { until } from '../helpers/until.js';

// A server of its own (redis-server installed where OAUTH_TEST_REDIS_URL is set): nothing shared is cut off.
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!REDIS_URL) console.info('Redis outage recovery tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const TIMEOUT_MS = 500;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** A redis-server of the test's own and a fault proxy in front of it. */
async function redisBehindProxy(): Promise<FaultProxy> {
  const server = await startRedisServer();
  cleanups.push(() => server.stop());
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: server.port });
  cleanups.push(() => proxy.close());
  return proxy;
}

/** A redis-server of the test's own, a fault proxy in front of it, and a store (with one integration) through the proxy. */
async function storeBehindProxy(): Promise<{ store: RedisStore; proxy: FaultProxy; clientId: string }> {
  const proxy = await redisBehindProxy();
  const store = await createRedisStore({
    url: `redis://127.0.0.1:${proxy.port}`, commandTimeoutMs: TIMEOUT_MS, sweepIntervalSeconds: 0, logger: { warn: () => undefined },
  });
  cleanups.push(() => store.close());
  const { client } = buildClient();
  await store.clients.createClient(client);
  return { store, proxy, clientId: client.clientId };
}

describe.skipIf(!REDIS_URL)('Redis store after an outage ends', () => {
  it('a call right after Redis is back is served, though the connection was refused for long enough to back off to seconds', { timeout: 45_000 }, async () => {
    const { store, proxy, clientId } = await storeBehindProxy();
    proxy.setMode('down');
    await expect(store.clients.findClient(clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
    // Reconnection attempts back off (50 ms, doubling to 2 s), the store's and its revocation feed's subscriber's alike,
    // both through the proxy: once two refused attempts in a row come a second apart, each connection's next waits 2 s.
    const before = proxy.accepted;
    // Up to 30 s: the backoff's 3.2 s stretches when the machine runs many suites at once (once past 10 s in an outside run).
    await until('the reconnection backoff to reach a second', () => backedOff(proxy, before, 1000), { tries: 1200 });
    proxy.setMode('up');
    // node-redis's own loop would still be asleep: this call was refused at once ("The client is closed").
    expect(await store.clients.findClient(clientId)).not.toBeNull();
  });

  it('a call that comes while a reconnection begun during the outage is under way waits for it, and for one begun after it fails: served once Redis is back, not refused at once', async () => {
    const proxy = await redisBehindProxy();
    const connection = await connectResilientRedis({ url: `redis://127.0.0.1:${proxy.port}`, timeoutMs: TIMEOUT_MS, logger: { warn() {} }, label: 'test' });
    cleanups.push(() => connection.close());
    // The outage swallows connections: the attempt that the lost connection's first call begins is never answered.
    proxy.setMode('hang');
    connection.client.destroy();
    await until('the lost connection closed at the proxy', () => proxy.open === 0);
    const first = connection.reconnect();
    expect(first).not.toBeNull();
    first!.catch(() => undefined);
    await until('the attempt accepted into the hang', () => proxy.open === 1);
    // A second call comes (the store's commands call reconnect() first); then the outage ends, resetting the attempt.
    const second = connection.reconnect();
    proxy.setMode('down');
    proxy.setMode('up');
    // Before: null while an attempt ran, so the command went out at once on the closed client: "The client is offline".
    expect(second).not.toBeNull();
    await withDeadline(second!, TIMEOUT_MS);
    expect(await connection.client.sendCommand(['PING'])).toBe('PONG');
    await expect(first).rejects.toThrow();
  });

  it('a hang (connections accepted, never answered): served within one command timeout of its end, not after the handshake\'s socket timeout and a backoff', async () => {
    const { store, proxy, clientId } = await storeBehindProxy();
    proxy.setMode('hang');
    // The first call meets the hung connection: it times out, and the probe drops the connection.
    await expect(store.clients.findClient(clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
    // Calls go on during the hang, each refused; wait until a reconnection has been swallowed by it.
    const before = proxy.accepted;
    while (proxy.accepted === before) {
      await expect(store.clients.findClient(clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
      // Refused at once (no offline queue) while a reconnection runs: let the event loop (and the proxy) turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The hang ends while that connection's handshake is unanswered (the proxy never answers it, like a middlebox
    // that lost the connection's state).
    proxy.setMode('up');
    const resumed = performance.now();
    let refused = 0;
    for (;;) {
      const found = await store.clients.findClient(clientId).catch((err: unknown) => {
        expect(err).toBeInstanceOf(StoreUnavailableError);
        return undefined;
      });
      if (found !== undefined) break;
      refused += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const servedAfterMs = performance.now() - resumed;
    // The handshake under way is dropped after the command timeout and the next call connects: before, the client
    // waited out its socket timeout (three command timeouts) and then a backoff, refusing every call meanwhile.
    expect(servedAfterMs, `${refused} calls refused after the hang ended`).toBeLessThan(2 * TIMEOUT_MS);
  });

  it('a close while the connection is being made again leaves no connection open behind it', async () => {
    const proxy = await redisBehindProxy();
    const connection = await connectResilientRedis({ url: `redis://127.0.0.1:${proxy.port}`, timeoutMs: TIMEOUT_MS, logger: { warn() {} }, label: 'test' });
    cleanups.push(() => connection.close());
    // The connection is lost while the proxy forwards, then made again into a hang: its handshake gets no answer.
    connection.client.destroy();
    await until('the lost connection closed at the proxy', () => proxy.open === 0);
    proxy.setMode('hang');
    const attempt = connection.reconnect();
    expect(attempt).not.toBeNull();
    attempt!.catch(() => undefined);
    await until('the new connection accepted', () => proxy.open === 1);
    await connection.close();
    // Before: close() cleared the handshake deadline and its QUIT-less close waited for the handshake's replies, so the
    // socket stayed open until the socket timeout (3 × 500 ms), holding a host that had let go of everything else.
    const closed = performance.now();
    await until('the attempt\'s connection closed', () => proxy.open === 0);
    expect(performance.now() - closed).toBeLessThan(TIMEOUT_MS);
  });
});
