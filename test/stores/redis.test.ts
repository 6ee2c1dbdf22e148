// Redis store: the conformance suite plus what only a shared server shows (cross-instance races, TTLs, outages).
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildToken } from '../../src/testing/conformance-fixtures.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { startFaultProxy } from './fault-proxy.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis store tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

let counter = 0;
/** A key prefix no other test (or parallel test file) uses, so every store starts empty. */
function freshPrefix(): string {
  counter += 1;
  return `oauth-test:${process.pid}:${counter}:${Math.random().toString(36).slice(2, 8)}:`;
}

const admin = createClient({ url });
const prefixOf = new WeakMap<Store, string>();

/** Deletes a prefix's keys with SCAN (never KEYS), as an operator would. */
async function deletePrefix(prefix: string): Promise<void> {
  for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    if (batch.length) await admin.del(batch);
  }
}

async function keysOf(prefix: string): Promise<string[]> {
  const all: string[] = [];
  for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) all.push(...batch);
  return all.sort();
}

async function openStore(prefix = freshPrefix()): Promise<Store> {
  const store = await createRedisStore({ url, prefix });
  prefixOf.set(store, prefix);
  return store;
}

describe.skipIf(!url)('Redis store', () => {
  beforeAll(async () => {
    await admin.connect();
  });
  afterAll(async () => {
    await admin.close();
  });

  runStoreConformance({
    name: 'redis',
    createStore: () => openStore(),
    async destroyStore(store) {
      await store.close?.();
      await deletePrefix(prefixOf.get(store) ?? 'never-matches:');
    },
  });

  describe('across instances', () => {
    it('50 concurrent consumeCode calls spread over two instances (two clients) give exactly one winner', async () => {
      const prefix = freshPrefix();
      const [a, b] = [await openStore(prefix), await openStore(prefix)];
      try {
        const code = buildCode();
        await a.codes.saveCode(code);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).codes.consumeCode(code.codeHash)),
        );
        expect(results.filter((r) => r.kind === 'consumed')).toHaveLength(1);
        expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(49);
      } finally {
        await Promise.all([a.close?.(), b.close?.()]);
        await deletePrefix(prefix);
      }
    });

    it('what one instance writes, another reads; a revocation on one is seen by the other', async () => {
      const prefix = freshPrefix();
      const [a, b] = [await openStore(prefix), await openStore(prefix)];
      try {
        const { client } = buildClient();
        await a.clients.saveClient(client);
        expect(await b.clients.findClient(client.clientId)).toEqual(client);
        const access = buildToken();
        expect(await a.tokens.saveTokens(access, null)).toBe(true);
        expect(await b.tokens.findAccessToken(access.tokenHash)).toEqual(access);
        await b.tokens.revokeGrant(access.grantId);
        expect(await a.tokens.findAccessToken(access.tokenHash)).toBeNull();
        expect(await a.tokens.saveTokens(buildToken({ grantId: access.grantId }), null)).toBe(false);
      } finally {
        await Promise.all([a.close?.(), b.close?.()]);
        await deletePrefix(prefix);
      }
    });
  });

  describe('keys and TTLs', () => {
    it('codes, tokens and tombstones carry native TTLs; clients and consents do not expire', async () => {
      const store = await openStore();
      const prefix = prefixOf.get(store)!;
      try {
        const code = buildCode();
        await store.codes.saveCode(code);
        const access = buildToken();
        await store.tokens.saveTokens(access, null);
        await store.tokens.revokeGrant('some-grant');
        const { client } = buildClient();
        await store.clients.saveClient(client);
        for (const key of await keysOf(prefix)) {
          const ttl = await admin.pTTL(key);
          const rest = key.slice(prefix.length);
          if (rest === 'clients' || rest.startsWith('client:')) expect(ttl, key).toBe(-1);
          else expect(ttl, key).toBeGreaterThan(0);
        }
        const codeTtl = await admin.pTTL(`${prefix}code:${code.codeHash}`);
        expect(codeTtl).toBeLessThanOrEqual(600_000);
        expect(await admin.pTTL(`${prefix}revoked:some-grant`)).toBeGreaterThan(23 * 3600 * 1000);
      } finally {
        await store.close?.();
        await deletePrefix(prefix);
      }
    });

    it('a consumed code keeps its key (for replay detection) until it expires', async () => {
      const store = await openStore();
      const prefix = prefixOf.get(store)!;
      try {
        const code = buildCode();
        await store.codes.saveCode(code);
        expect((await store.codes.consumeCode(code.codeHash)).kind).toBe('consumed');
        expect(await admin.exists(`${prefix}code:${code.codeHash}`)).toBe(1);
        expect(await store.codes.consumeCode(code.codeHash)).toEqual({ kind: 'replayed', grantId: code.grantId });
      } finally {
        await store.close?.();
        await deletePrefix(prefix);
      }
    });

    it('revokeClientTokens drains a large index in chunks', async () => {
      const store = await openStore();
      const prefix = prefixOf.get(store)!;
      try {
        const clientId = 'busy-client';
        const issued = Array.from({ length: 1200 }, () => buildToken({ clientId, userId: null }));
        for (let i = 0; i < issued.length; i += 100) {
          await Promise.all(issued.slice(i, i + 100).map((t) => store.tokens.saveTokens(t, null)));
        }
        await store.tokens.revokeClientTokens(clientId);
        const left = (await keysOf(prefix)).filter((k) => k.includes(':at:'));
        expect(left).toEqual([]);
      } finally {
        await store.close?.();
        await deletePrefix(prefix);
      }
    });

    it('a host client stays open after close()', async () => {
      const host = createClient({ url });
      await host.connect();
      const prefix = freshPrefix();
      try {
        const store = await createRedisStore({ client: host, prefix });
        await store.clients.saveClient(buildClient().client);
        await store.close?.();
        expect(await host.ping()).toBe('PONG');
      } finally {
        await host.close();
        await deletePrefix(prefix);
      }
    });
  });

  describe('outages', () => {
    it('rejects with StoreUnavailableError when Redis is unreachable', async () => {
      await expect(createRedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 1000 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
    });

    it('answers StoreUnavailableError while Redis is down or hanging, and resumes when it is back', async () => {
      const target = new URL(url);
      const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 6379) });
      const prefix = freshPrefix();
      const store = await createRedisStore({ url: `redis://127.0.0.1:${proxy.port}`, prefix, commandTimeoutMs: 500 });
      try {
        const { client } = buildClient();
        await store.clients.saveClient(client);
        for (const mode of ['down', 'hang'] as const) {
          proxy.setMode(mode);
          await expect(store.clients.findClient(client.clientId), mode).rejects.toBeInstanceOf(StoreUnavailableError);
          await expect(store.tokens.saveTokens(buildToken(), null), mode).rejects.toBeInstanceOf(StoreUnavailableError);
          proxy.setMode('up');
          // Nothing written before the outage is lost, and no restart is needed.
          await expect
            .poll(() => store.clients.findClient(client.clientId).catch(() => null), { timeout: 8000 })
            .toEqual(client);
        }
      } finally {
        await store.close?.();
        await proxy.close();
        await deletePrefix(prefix);
      }
    });

    it('fails with StoreUnavailableError while disconnected, and serves again after reconnecting', async () => {
      const idsOf = async (): Promise<Set<string>> =>
        new Set((await admin.clientList()).map((c) => String(c.id)));
      const before = await idsOf();
      const store = await openStore();
      const prefix = prefixOf.get(store)!;
      const mine = [...(await idsOf())].filter((id) => !before.has(id));
      try {
        const { client } = buildClient();
        await store.clients.saveClient(client);
        // Drop the store's own connection from the server side, as a Redis restart would.
        expect(mine.length).toBeGreaterThan(0);
        for (const id of mine) await admin.sendCommand(['CLIENT', 'KILL', 'ID', id]);
        const during = await store.clients.findClient(client.clientId).catch((err: unknown) => err);
        if (during instanceof Error) expect(during).toBeInstanceOf(StoreUnavailableError);
        await expect
          .poll(() => store.clients.findClient(client.clientId).catch(() => null), { timeout: 5000 })
          .toEqual(client);
      } finally {
        await store.close?.();
        await deletePrefix(prefix);
      }
    });
  });
});
