// Redis store: the conformance suite plus what only a real server shows (keys, TTLs, stored data, outages).
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdministrationStore, Store } from '../../src/stores/contract.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildToken } from '../../src/testing/conformance-fixtures.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { untilServing } from '../helpers/store-races.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';

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
const proxyOf = new WeakMap<Store, FaultProxy>();

/** Deletes a prefix's keys with SCAN (never KEYS), as an operator would. */
async function deletePrefix(prefix: string): Promise<void> {
  for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
    if (batch.length) await admin.del(batch);
  }
}

/** The prefix's keys, found with SCAN (never KEYS), as an operator would. */
async function keysOf(prefix: string): Promise<string[]> {
  const all: string[] = [];
  for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) all.push(...batch);
  return all.sort();
}

/** The Redis store has every tier; the contract types the administration methods as optional. */
async function openStore(prefix = freshPrefix(), storeUrl = url): Promise<AdministrationStore> {
  // Connection losses are what the outage tests cause: no need to log them.
  const logger = { warn: () => undefined };
  const store = (await createRedisStore({ url: storeUrl, prefix, commandTimeoutMs: 2000, logger })) as AdministrationStore;
  prefixOf.set(store, prefix);
  return store;
}

/** One store on a fresh prefix, closed and wiped after `body`. */
async function withStore(body: (store: AdministrationStore, prefix: string) => Promise<void>): Promise<void> {
  const prefix = freshPrefix();
  const store = await openStore(prefix);
  try {
    await body(store, prefix);
  } finally {
    await store.close?.();
    await deletePrefix(prefix);
  }
}

describe.skipIf(!url)('Redis store', () => {
  beforeAll(async () => {
    await admin.connect();
  });
  afterAll(async () => {
    await admin.close();
  });

  // Every conformance store talks to Redis through its own fault proxy, so the outage rule can cut it off:
  // a reset connection makes every call fail at once (no offline queue) with StoreUnavailableError.
  runStoreConformance({
    name: 'redis',
    async createStore() {
      const target = new URL(url);
      const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 6379) });
      const store = await openStore(freshPrefix(), `redis://127.0.0.1:${proxy.port}`);
      proxyOf.set(store, proxy);
      return store;
    },
    // Another instance on the same prefix, connected directly: its revocations reach the store by pub/sub only.
    openPeer: (store) => openStore(prefixOf.get(store)!),
    // The peer connects directly, past the proxy the outage hook cuts: it can revoke during the outage.
    outageSparesPeer: true,
    async destroyStore(store: Store) {
      await store.close?.();
      await proxyOf.get(store)?.close();
      await deletePrefix(prefixOf.get(store) ?? 'never-matches:');
    },
    async simulateOutage(store: Store) {
      const proxy = proxyOf.get(store);
      if (!proxy) throw new Error('simulateOutage: not a store of this suite');
      proxy.setMode('down');
      return async () => {
        proxy.setMode('up');
        await untilServing(store);
      };
    },
  } as Parameters<typeof runStoreConformance>[0]);

  describe('keys, TTLs and stored data', () => {
    it('codes, tokens and tombstones carry native TTLs; clients and consents do not expire', async () => {
      await withStore(async (store, prefix) => {
        const code = buildCode({ issuedAt: new Date() });
        await store.codes.saveCode(code);
        const access = buildToken({ userId: 'user-1' });
        await store.tokens.saveTokens(access, null, { authorizedAt: new Date() });
        await store.tokens.revokeGrant('some-grant');
        await store.tokens.revokeClientTokens('some-client');
        await store.tokens.revokeClientTokens('some-client', 'some-user');
        await store.clients.createClient(buildClient().client);
        for (const key of await keysOf(prefix)) {
          const ttl = await admin.pTTL(key);
          const rest = key.slice(prefix.length);
          if (rest === 'clients' || rest.startsWith('client:')) expect(ttl, key).toBe(-1);
          else expect(ttl, key).toBeGreaterThan(0);
        }
        expect(await admin.pTTL(`${prefix}code:${code.codeHash}`)).toBeLessThanOrEqual(600_000);
        for (const tombstone of ['revoked:some-grant', 'revoked-client:{some-client}', 'revoked-user:{some-client}:some-user']) {
          expect(await admin.pTTL(`${prefix}${tombstone}`), tombstone).toBeGreaterThan(23 * 3600 * 1000);
        }
      });
    });

    it('a consumed code keeps its key (for replay detection) until it expires', async () => {
      await withStore(async (store, prefix) => {
        const code = buildCode({ issuedAt: new Date() });
        await store.codes.saveCode(code);
        expect((await store.codes.consumeCode(code.codeHash)).kind).toBe('consumed');
        expect(await admin.exists(`${prefix}code:${code.codeHash}`)).toBe(1);
        expect(await store.codes.consumeCode(code.codeHash)).toEqual({ kind: 'replayed', grantId: code.grantId, userId: code.userId, clientId: code.clientId });
      });
    });

    it('a revocation interrupted midway is finished by the next one', async () => {
      await withStore(async (store, prefix) => {
        const token = buildToken({ clientId: 'c', userId: null });
        await store.tokens.saveTokens(token, null, { authorizedAt: new Date() });
        // What the first script of a revocation leaves if its process dies before draining.
        await admin.rename(`${prefix}ctok:c`, `${prefix}ctok:c:draining`);
        await store.tokens.revokeClientTokens('c');
        expect(await store.tokens.findAccessToken(token.tokenHash)).toBeNull();
      });
    });

    it('data of version 0.1 reads: a client stored as one JSON string (converted on update), a code without issuedAt', async () => {
      await withStore(async (store, prefix) => {
        const { client } = buildClient({ clientId: 'legacy' });
        const json = JSON.stringify({ ...client, credentialsIssuedAt: client.credentialsIssuedAt.getTime(), createdAt: client.createdAt.getTime() });
        await admin.set(`${prefix}client:legacy`, json);
        await admin.zAdd(`${prefix}clients`, { score: client.createdAt.getTime(), value: 'legacy' });
        expect(await store.clients.findClient('legacy')).toEqual(client);
        expect(await store.clients.createClient(client)).toBe(false);
        expect(await store.clients.updateClient('legacy', { disabled: true })).toEqual({ ...client, disabled: true });
        expect(await admin.type(`${prefix}client:legacy`)).toBe('hash');
        expect(await store.clients.listClients()).toEqual([{ ...client, disabled: true }]);

        const { issuedAt: _, ...code } = buildCode({ issuedAt: new Date() });
        const expiresAt = code.expiresAt.getTime();
        await admin.hSet(`${prefix}code:${code.codeHash}`, { d: JSON.stringify({ ...code, expiresAt }), x: String(expiresAt), g: code.grantId });
        const consumed = await store.codes.consumeCode(code.codeHash);
        expect(consumed).toEqual({ kind: 'consumed', record: { ...code, issuedAt: new Date(expiresAt - 600_000) } });
      });
    });

    it('data of version 0.1: disableClient and enableClient convert a JSON-string client first, then answer whether it changed', async () => {
      await withStore(async (store, prefix) => {
        const { client } = buildClient({ clientId: 'legacy-status' });
        const json = JSON.stringify({ ...client, credentialsIssuedAt: client.credentialsIssuedAt.getTime(), createdAt: client.createdAt.getTime() });
        await admin.set(`${prefix}client:legacy-status`, json);
        await admin.zAdd(`${prefix}clients`, { score: client.createdAt.getTime(), value: 'legacy-status' });
        expect(await store.clients.disableClient!('legacy-status')).toBe('disabled');
        expect(await admin.type(`${prefix}client:legacy-status`)).toBe('hash');
        expect(await store.clients.disableClient!('legacy-status')).toBe('already_disabled');
        expect(await store.clients.enableClient!('legacy-status')).toBe('enabled');
        expect(await store.clients.enableClient!('legacy-status')).toBe('already_enabled');
        expect(await store.clients.findClient('legacy-status')).toEqual(client);
        expect(await store.clients.disableClient!('missing')).toBeNull();
        expect(await store.clients.enableClient!('missing')).toBeNull();
      });
    });

    it('a host client stays open after close()', async () => {
      const host = createClient({ url });
      await host.connect();
      const prefix = freshPrefix();
      try {
        const store = (await createRedisStore({ client: host, prefix })) as AdministrationStore;
        await store.clients.createClient(buildClient().client);
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
      const options = { url: `redis://127.0.0.1:${proxy.port}`, prefix, commandTimeoutMs: 500, logger: { warn: () => undefined } };
      const store = (await createRedisStore(options)) as AdministrationStore;
      try {
        const { client } = buildClient();
        await store.clients.createClient(client);
        for (const mode of ['down', 'hang'] as const) {
          proxy.setMode(mode);
          await expect(store.clients.findClient(client.clientId), mode).rejects.toBeInstanceOf(StoreUnavailableError);
          await expect(store.tokens.saveTokens(buildToken(), null, { authorizedAt: new Date() }), mode).rejects.toBeInstanceOf(
            StoreUnavailableError,
          );
          await expect(store.clients.updateClient(client.clientId, { disabled: true }), mode).rejects.toBeInstanceOf(
            StoreUnavailableError,
          );
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
      const idsOf = async (): Promise<Set<string>> => new Set((await admin.clientList()).map((c) => String(c.id)));
      const before = await idsOf();
      const store = await openStore();
      const prefix = prefixOf.get(store)!;
      const mine = [...(await idsOf())].filter((id) => !before.has(id));
      try {
        const { client } = buildClient();
        await store.clients.createClient(client);
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
