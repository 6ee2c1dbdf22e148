// requireBearer's token cache on Redis: a revocation by another instance stops a cached token once its message arrives.
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken, revoke } from '../helpers/token-requests.js';
import { countingHost, type CountingHost, crossInstanceRevocationCases, me, NOTIFIED, untilNotified, useUntilCached } from '../helpers/bearer-cache.js';
import { startFaultProxy, type FaultProxy } from '../stores/fault-proxy.js';
import { createRedisStore, type RedisCommandClient } from '../../src/stores/redis/index.js';
import { revocationFeedConnectionName } from '../../src/stores/redis/revocation-feed.js';
import type { CompleteStore, RevocationMark } from '../../src/stores/contract.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis bearer-cache tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const admin = createClient({ url });
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let counter = 0;
/** A key prefix (and so a revocation channel) no other test or test file uses. */
function freshPrefix(): string {
  counter += 1;
  return `oauth-test-cache:${process.pid}:${counter}:${Math.random().toString(36).slice(2, 8)}:`;
}

/** Deletes a prefix's keys with SCAN, never KEYS. */
async function deletePrefix(prefix: string): Promise<void> {
  for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    if (batch.length) await admin.del(batch);
  }
}

/** What the stores warned, in order. */
const warned: string[] = [];

async function openStore(prefix: string, client?: RedisCommandClient, commandTimeoutMs = 2000): Promise<CompleteStore> {
  const logger = { warn: (message: string) => void warned.push(message) };
  const store = await createRedisStore(client ? { client, prefix, commandTimeoutMs, logger } : { url, prefix, commandTimeoutMs, logger });
  cleanups.push(() => store.close?.());
  return store;
}

/** Instance A (serving, caching) and instance B (revoking), two stores and routers on one Redis prefix. */
async function twoInstances(): Promise<{ a: CountingHost; b: TestApp; storeB: CompleteStore; prefix: string }> {
  const prefix = freshPrefix();
  cleanups.push(() => deletePrefix(prefix));
  const a = await countingHost(await openStore(prefix));
  const storeB = await openStore(prefix);
  return { a, b: await createTestApp({}, storeB), storeB, prefix };
}

/** The CLIENT ID of the feed's subscriber connection of the stores on `prefix` (it names itself). */
async function subscriberIds(prefix: string): Promise<string[]> {
  const list = (await admin.sendCommand(['CLIENT', 'LIST', 'TYPE', 'pubsub'])) as string;
  const name = `name=${revocationFeedConnectionName(prefix)} `;
  return list.split('\n').filter((line) => line.includes(name)).map((line) => /\bid=(\d+)/.exec(line)?.[1] ?? '');
}

/** The epoch part of a `${epoch}:${count}` mark. */
function epochOf(mark: RevocationMark): string {
  return String(mark).split(':')[0] ?? '';
}

describe.skipIf(!url)('requireBearer cache on Redis, revoked by another instance (RFC 6750 §3.1, RFC 7009 §2.1)', () => {
  beforeAll(async () => {
    await admin.connect();
  });
  afterAll(async () => {
    await admin.close();
  });

  crossInstanceRevocationCases(twoInstances);

  it('a revocation by a store on another key prefix does not disturb the cache (its channel is another)', async () => {
    const { a, prefix } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const mark = await useUntilCached(a, token);
    const otherPrefix = freshPrefix();
    cleanups.push(() => deletePrefix(otherPrefix));
    const other = await createTestApp({}, await openStore(otherPrefix));
    const foreign = await clientCredentialsToken(other.app, other.credentialsClient);
    expect((await revoke(other.app, other.credentialsClient, { token: foreign })).status).toBe(200);
    // One message on A's channel, published after the other store's: when A has it, it would have the other.
    await admin.publish(`${prefix}revocations`, '1');
    await untilNotified(a, mark);
    const [epoch, count] = String(mark).split(':');
    expect(a.feed.mark()).toBe(`${epoch}:${Number(count) + 1}`);
  });
});

describe.skipIf(!url)('the Redis revocation feed when its subscriber connection drops', () => {
  beforeAll(async () => {
    await admin.connect();
  });
  afterAll(async () => {
    await admin.close();
  });

  it('CLIENT KILL of the subscriber: a new epoch once resubscribed, and the cache built before it is dropped', async () => {
    const { a, prefix } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const mark = await useUntilCached(a, token);
    // Both instances' subscribers: instance B's reconnects too, unseen.
    const ids = await subscriberIds(prefix);
    expect(ids).toHaveLength(2);
    warned.length = 0;
    for (const id of ids) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
    // null meanwhile (too briefly to catch here: the outage case below holds it down), then a new epoch.
    await expect.poll(() => { const now = a.feed.mark(); return now !== null && epochOf(now) !== epochOf(mark); }, NOTIFIED).toBe(true);
    const before = a.lookups();
    expect((await me(a.app, token)).status).toBe(200);
    expect(a.lookups(), 'a cache built before the gap is not trusted').toBe(before + 1);
    await useUntilCached(a, token);
    // The operator hears of the loss and of its end, once each per instance.
    await expect.poll(() => warned.filter((m) => m.includes('revocation feed back')).length, NOTIFIED).toBe(2);
    expect(warned.filter((m) => m.includes('revocation feed lost'))).toHaveLength(2);
  });

  /** A host whose client sends commands straight to Redis and whose feed's duplicate goes through a fault proxy. */
  async function hostBehindProxy(commandTimeoutMs?: number): Promise<{ a: CountingHost; proxy: FaultProxy; prefix: string }> {
    const target = new URL(url);
    const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 6379) });
    cleanups.push(() => proxy.close());
    const direct = createClient({ url });
    await direct.connect();
    cleanups.push(() => direct.close());
    const client = {
      get isOpen() {
        return direct.isOpen;
      },
      sendCommand: (args: readonly string[]) => direct.sendCommand([...args]),
      duplicate: (overrides?: object) => createClient({
        url: `redis://127.0.0.1:${proxy.port}`,
        ...overrides,
        socket: { reconnectStrategy: () => 20, connectTimeout: 200 },
      }),
    };
    const prefix = freshPrefix();
    cleanups.push(() => deletePrefix(prefix));
    return { a: await countingHost(await openStore(prefix, client, commandTimeoutMs)), proxy, prefix };
  }

  /** The feed vouches again, in a new epoch, and a message on its channel reaches it: back for real. */
  async function expectBackWithNewEpoch(a: CountingHost, prefix: string, before: RevocationMark): Promise<void> {
    await expect.poll(() => a.feed.mark(), NOTIFIED).not.toBeNull();
    expect(epochOf(a.feed.mark())).not.toBe(epochOf(before));
    const back = a.feed.mark();
    await admin.publish(`${prefix}revocations`, '1');
    await expect.poll(() => a.feed.mark(), NOTIFIED).not.toBe(back);
  }

  it('while the subscriber cannot reconnect, mark() is null and every request is looked up; back, a new epoch', async () => {
    const { a, proxy, prefix } = await hostBehindProxy();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const mark = await useUntilCached(a, token);

    proxy.setMode('down');
    await expect.poll(() => a.feed.mark(), NOTIFIED).toBeNull();
    const before = a.lookups();
    for (let i = 0; i < 3; i += 1) expect((await me(a.app, token)).status).toBe(200);
    expect(a.lookups(), 'no cache while the feed cannot vouch').toBe(before + 3);

    proxy.setMode('up');
    await expectBackWithNewEpoch(a, prefix, mark);
    await useUntilCached(a, token);
  });

  it('a subscriber link that goes silent without a reset (black-holed): mark() is null, then a new connection and epoch', async () => {
    // Feed PINGs every 200 ms and gives up on a link silent for 400 ms.
    const { a, proxy, prefix } = await hostBehindProxy(200);
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const mark = await useUntilCached(a, token);

    proxy.setMode('hang');
    await expect.poll(() => a.feed.mark(), NOTIFIED).toBeNull();
    const before = a.lookups();
    expect((await me(a.app, token)).status).toBe(200);
    expect(a.lookups(), 'no cache while the feed is silent').toBe(before + 1);

    proxy.setMode('up');
    await expectBackWithNewEpoch(a, prefix, mark);
  });
  it('a link gone silent is noticed within twice the command timeout even when the wall clock steps back (an NTP step) meanwhile', async () => {
    const { a, proxy } = await hostBehindProxy(200);
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    await useUntilCached(a, token);
    proxy.setMode('hang');
    // Ten minutes back, after the last PONG: silence is a duration, which a wall-clock step must not stretch.
    const real = Date.now.bind(Date);
    const stepped = vi.spyOn(Date, 'now').mockImplementation(() => real() - 600_000);
    cleanups.push(() => stepped.mockRestore());
    await expect.poll(() => a.feed.mark(), NOTIFIED).toBeNull();
  });
});
