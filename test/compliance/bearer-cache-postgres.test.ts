// requireBearer's token cache on PostgreSQL: a revocation by another instance stops a cached token once its NOTIFY arrives.
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { untilServing } from '../helpers/store-races.js';
import { countingHost, type CountingHost, crossInstanceRevocationCases, expectRefused, me, NOTIFIED, untilNotified, useUntilCached } from '../helpers/bearer-cache.js';
import { startFaultProxy } from '../stores/fault-proxy.js';
import { startNotifyMutingProxy } from '../stores/notify-muting-proxy.js';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { postgresRevocationChannel } from '../../src/stores/postgres/revocation-feed.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import type { RevocationMark, Store } from '../../src/stores/contract.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL bearer-cache tests skipped: set OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test to run them');

/** Reconnection backs off up to 5 s between attempts. */
const RECONNECTED = { timeout: 20_000, interval: 20 };

const admin = url ? new pg.Pool({ connectionString: url, max: 2 }) : null;
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the stores warned, in order. */
const warned: string[] = [];

let counter = 0;
/** A schema (and so a notification channel) no other test or test file uses. */
function freshSchema(): string {
  counter += 1;
  return `oauth_cache_${process.pid}_${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

async function openStore(schema: string, connectionString = url): Promise<PostgresStore> {
  const store = await createPostgresStore({
    connectionString,
    schema,
    sweepIntervalSeconds: 0,
    queryTimeoutMs: 2000,
    logger: { warn: (message: string) => void warned.push(message) },
  });
  cleanups.push(() => store.close());
  return store;
}

/** Instance A (serving, caching) and instance B (revoking): two stores, pools and routers on one schema. */
async function twoInstances(urlOfA = url): Promise<{ a: CountingHost; b: TestApp; storeA: Store; storeB: PostgresStore; schema: string }> {
  const schema = freshSchema();
  cleanups.push(() => admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  const storeA = await openStore(schema, urlOfA);
  const a = await countingHost(storeA);
  const storeB = await openStore(schema);
  return { a, b: await createTestApp({}, storeB), storeA, storeB, schema };
}

/** The `${epoch}:${count}` parts of a mark. */
function partsOf(mark: RevocationMark): { epoch: string; count: number } {
  const [epoch = '', count = 'NaN'] = String(mark).split(':');
  return { epoch, count: Number(count) };
}

/** The server process id of the feed's listener of the stores on `schema` (it names itself after its channel). */
async function listenerPids(schema: string): Promise<number[]> {
  const { rows } = await admin!.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [postgresRevocationChannel(schema, '')],
  );
  return rows.map((row) => row.pid);
}

afterAll(async () => {
  await admin?.end();
});

describe.skipIf(!url)('requireBearer cache on PostgreSQL, revoked by another instance (RFC 6750 §3.1, RFC 7009 §2.1)', () => {
  crossInstanceRevocationCases(twoInstances);

  it('revocations in another schema on the same database do not move the mark (each store has its own channel)', async () => {
    const { a, storeB } = await twoInstances();
    const otherSchema = freshSchema();
    cleanups.push(() => admin?.query(`DROP SCHEMA IF EXISTS "${otherSchema}" CASCADE`));
    const elsewhere = await openStore(otherSchema);
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const before = await useUntilCached(a, token);
    // Committed first, so had it been on A's channel it would have arrived first.
    await elsewhere.tokens.revokeGrant('some-grant-elsewhere');
    await storeB.tokens.revokeAccessToken(hashToken(token));
    await untilNotified(a, before);
    const after = partsOf(a.feed.mark());
    expect(after.epoch).toBe(partsOf(before).epoch);
    expect(after.count).toBe(partsOf(before).count + 1);
  });

  it('a live token deleted outside the store (by hand, or by a version without the feed) is refused once its NOTIFY arrives (migration 10)', async () => {
    const { a, schema } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const before = await useUntilCached(a, token);
    await admin!.query(`DELETE FROM "${schema}".tokens WHERE token_hash = $1`, [hashToken(token)]);
    await untilNotified(a, before);
    await expectRefused(a, token);
  });

  it('deleting only expired rows (the sweep) notifies nothing; the store\'s own revocation is delivered once (migration 10)', async () => {
    const { a, storeB, schema } = await twoInstances();
    const revoked = await clientCredentialsToken(a.app, a.credentialsClient);
    const expired = await clientCredentialsToken(a.app, a.credentialsClient);
    // The test's own listener: notifications arrive in commit order, so one sent after a statement commits marks
    // the point by which that statement's own would have arrived.
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    cleanups.push(() => listener.end());
    const heard: string[] = [];
    listener.on('notification', (message) => { heard.push(message.payload ?? ''); });
    const channel = postgresRevocationChannel(schema, '');
    await listener.query(`LISTEN "${channel}"`);
    const barrier = async (name: string) => {
      await admin!.query('SELECT pg_notify($1, $2)', [channel, name]);
      await expect.poll(() => heard.includes(name), NOTIFIED).toBe(true);
    };
    await admin!.query(`UPDATE "${schema}".tokens SET expires_at = now() - interval '1 minute' WHERE token_hash = $1`, [hashToken(expired)]);
    const swept = await admin!.query(`DELETE FROM "${schema}".tokens WHERE expires_at <= now()`);
    expect(swept.rowCount).toBe(1);
    await barrier('after-sweep');
    // The store's own statement notifies, and so does the trigger, in one transaction: delivered once.
    await storeB.tokens.revokeAccessToken(hashToken(revoked));
    await barrier('after-revocation');
    expect(heard.filter((payload) => !payload.startsWith('after-') && !payload.startsWith('ping'))).toEqual(['']);
    expect(heard.indexOf('')).toBeGreaterThan(heard.indexOf('after-sweep'));
    await expectRefused(a, revoked);
  });

  it('while the listener is cut off mark() is null and every request is looked up; after it reconnects, a new epoch', async () => {
    const { a, storeB, schema } = await twoInstances();
    const kept = await clientCredentialsToken(a.app, a.credentialsClient);
    const revoked = await clientCredentialsToken(a.app, a.credentialsClient);
    await useUntilCached(a, revoked);
    const before = await useUntilCached(a, kept);
    const pids = await listenerPids(schema);
    expect(pids).toHaveLength(2);
    // Both instances' listeners go (pg_terminate_backend, as a server restart or a failover would).
    warned.length = 0;
    await admin!.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
    await expect.poll(() => a.feed.mark(), NOTIFIED).toBeNull();
    const lookups = a.lookups();
    expect((await me(a.app, kept)).status).toBe(200);
    expect((await me(a.app, kept)).status).toBe(200);
    // Checked after: still null then means it was null all along (rarely the listener is back already).
    if (a.feed.mark() === null) expect(a.lookups(), 'nothing is served from the cache while the feed is down').toBe(lookups + 2);
    // A revocation whose notification A may never receive: the gap's new epoch is what stops the token.
    await storeB.tokens.revokeAccessToken(hashToken(revoked));
    await expect.poll(() => a.feed.mark(), RECONNECTED).not.toBeNull();
    expect(partsOf(a.feed.mark()).epoch).not.toBe(partsOf(before).epoch);
    await expectRefused(a, revoked);
    await useUntilCached(a, kept);
    expect(await listenerPids(schema)).toHaveLength(2);
    // The operator hears of the loss and of its end, once each per instance.
    await expect.poll(() => warned.filter((m) => m.includes('revocation feed back')).length, RECONNECTED).toBe(2);
    expect(warned.filter((m) => m.includes('revocation feed lost'))).toHaveLength(2);
  });

  it('a listener whose link goes silent (no reset) stops vouching within 2 s + the ping timeout, then recovers with a new epoch', async () => {
    const target = new URL(url);
    const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const viaProxy = new URL(url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const { a, storeA, storeB } = await twoInstances(viaProxy.href);
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const before = await useUntilCached(a, token);
    // Black-holed both ways: no error, no reset; only the listener's own pings stop coming back.
    proxy.setMode('hang');
    await expect.poll(() => a.feed.mark(), NOTIFIED).toBeNull();
    // Its notification can never reach A's silent link: the new epoch after recovery is what stops the token.
    await storeB.tokens.revokeAccessToken(hashToken(token));
    proxy.setMode('up');
    await expect.poll(() => a.feed.mark(), RECONNECTED).not.toBeNull();
    expect(partsOf(a.feed.mark()).epoch).not.toBe(partsOf(before).epoch);
    await untilServing(storeA);
    await expectRefused(a, token);
  });
  it('a listener whose pings stop coming back stops vouching within 2 s + the ping timeout even when the wall clock steps back (an NTP step)', async () => {
    const target = new URL(url);
    const proxy = await startNotifyMutingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    cleanups.push(() => proxy.close());
    const viaProxy = new URL(url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const { a } = await twoInstances(viaProxy.href);
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    await useUntilCached(a, token);
    // Queries still answer (the pings are sent), but no notification comes back: a pooler that does not pass them on.
    proxy.mute(true);
    // Ten minutes back: how long ago the last ping came back is a duration, which a wall-clock step must not stretch.
    const real = Date.now.bind(Date);
    const stepped = vi.spyOn(Date, 'now').mockImplementation(() => real() - 600_000);
    cleanups.push(() => stepped.mockRestore());
    await expect.poll(() => a.feed.mark(), NOTIFIED).toBeNull();
  });
});

describe.skipIf(!url)('deleting an integration on PostgreSQL (RFC 7009 §2.1)', () => {
  it("moves the other instances' marks, since its tokens went with it, and its own before it resolves", async () => {
    const { a, storeA, storeB } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const before = await useUntilCached(a, token);
    const ownBefore = storeB.revocations!.mark();
    await storeB.clients.deleteClient!(a.credentialsClient.clientId);
    expect(storeB.revocations!.mark()).not.toBe(ownBefore);
    await untilNotified(a, before);
    await expectRefused(a, token);
    expect(await storeA.clients.findClient(a.credentialsClient.clientId)).toBeNull();
  });
});
