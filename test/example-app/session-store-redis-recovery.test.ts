// Example app's Redis sessions: once Redis answers again after an outage, sessions are served at once, as tokens are.
import { afterEach, describe, expect, it } from 'vitest';
import { createSessionStore, type AppSessionStore } from '../../example-app/session-store.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { backedOff, startFaultProxy, type FaultProxy } from '../stores/fault-proxy.js';
import { until } from '../helpers/until.js';
import { getSession, SESSION, setSession } from '../helpers/session-calls.js';

// A server of its own (redis-server installed where OAUTH_TEST_REDIS_URL is set): nothing shared is cut off.
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!REDIS_URL) console.info('Redis session recovery tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');
// Where several suites share a machine, OAUTH_TEST_PORT_BASE pins this test's two ports (server, proxy) to a range.
const PORT_BASE = Number(process.env.OAUTH_TEST_PORT_BASE ?? 0);

const TIMEOUT_MS = 500;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** A redis-server of the test's own, a fault proxy in front of it, and the example app's session store through the proxy. */
async function sessionsBehindProxy(): Promise<{ sessions: AppSessionStore; proxy: FaultProxy }> {
  const server = await startRedisServer([], { port: PORT_BASE || undefined });
  cleanups.push(() => server.stop());
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: server.port }, PORT_BASE ? PORT_BASE + 1 : 0);
  cleanups.push(() => proxy.close());
  const sessions = await createSessionStore(`redis://127.0.0.1:${proxy.port}?prefix=recovery:`, { timeoutMs: TIMEOUT_MS, logger: { warn: () => undefined } });
  cleanups.push(() => sessions.close());
  return { sessions, proxy };
}


describe.skipIf(!REDIS_URL)('example app Redis sessions after an outage ends', () => {
  it('a session read right after Redis is back is served, though the connection was refused long enough to back off to seconds', { timeout: 45_000 }, async () => {
    const { sessions, proxy } = await sessionsBehindProxy();
    await setSession(sessions, 'sid-1', SESSION);
    proxy.setMode('down');
    await expect(getSession(sessions, 'sid-1')).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    // Background reconnection attempts back off (50 ms, doubling to 2 s): once two refused attempts in a row come a
    // second apart, the next waits 2 s.
    const before = proxy.accepted;
    // Up to 30 s: the backoff reaches a second after 3.2 s (50 + 100 + … + 1600 ms), longer when the machine runs many
    // suites at once; the store's own test, the same wait, once passed 10 s beside seven other suites.
    await until('the reconnection backoff to reach a second', () => backedOff(proxy, before, 1000), { tries: 1200 });
    proxy.setMode('up');
    // Without an on-demand reconnect this read was refused at once ("The client is closed") until the backoff ended.
    expect(await getSession(sessions, 'sid-1')).toMatchObject({ cookie: { originalMaxAge: 60_000 } });
  });
});
