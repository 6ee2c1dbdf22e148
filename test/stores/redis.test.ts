// Redis store: the conformance suite plus what only a shared server shows (cross-instance races, TTLs, outages).
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdministrationStore, Store, TokenRecord } from '../../src/stores/contract.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildToken, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { runStoreConformance } from '../../src/testing/index.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis store tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const ROUNDS = 200;
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

/** Two instances (two connections) on one prefix, closed and wiped after `body`. */
async function withTwoInstances(body: (a: AdministrationStore, b: AdministrationStore) => Promise<void>): Promise<void> {
  const prefix = freshPrefix();
  const [a, b] = [await openStore(prefix), await openStore(prefix)];
  try {
    await body(a, b);
  } finally {
    await Promise.all([a.close?.(), b.close?.()]);
    await deletePrefix(prefix);
  }
}

/** Every token in `tokens` reads as absent on both instances. */
async function expectAllGone(stores: readonly Store[], tokens: readonly TokenRecord[]): Promise<void> {
  for (const store of stores) {
    const found = await Promise.all(
      tokens.flatMap((t) => [store.tokens.findAccessToken(t.tokenHash), store.tokens.findRefreshToken(t.tokenHash)]),
    );
    expect(found.filter((r) => r !== null)).toEqual([]);
  }
}

/**
 * Saves tokens on `store`, one save after another, for as long as `revoke` (run on another instance) is
 * under way, so that saves land before, between and after its steps; `saveFirst` sends the first save
 * before the revocation's first command rather than after it. Resolves every token it tried to save.
 */
async function saveWhile(
  store: Store,
  revoke: () => Promise<void>,
  make: () => { access: TokenRecord; refresh: TokenRecord | null },
  options: { authorizedAt: Date; saveFirst: boolean },
): Promise<TokenRecord[]> {
  const tried: TokenRecord[] = [];
  const save = (): Promise<boolean> => {
    const { access, refresh } = make();
    tried.push(access, ...(refresh ? [refresh] : []));
    return store.tokens.saveTokens(access, refresh, { authorizedAt: options.authorizedAt });
  };
  const first = options.saveFirst ? save() : null;
  let settled = false;
  const revocation = revoke().finally(() => {
    settled = true;
  });
  await (first ?? save());
  while (!settled) await save();
  await revocation;
  return tried;
}

/** Resolves once `store` answers again, after an outage ended (the client reconnects with backoff). */
async function untilServing(store: Store): Promise<void> {
  for (let deadline = Date.now() + 10_000; ; ) {
    try {
      await store.clients.findClient('readiness-probe');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
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

  describe('across instances', () => {
    it('of 50 concurrent consumeCode calls spread over two instances exactly one wins', async () => {
      await withTwoInstances(async (a, b) => {
        const code = buildCode({ issuedAt: new Date() });
        await a.codes.saveCode(code);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).codes.consumeCode(code.codeHash)),
        );
        expect(results.filter((r) => r.kind === 'consumed')).toHaveLength(1);
        expect(results.filter((r) => r.kind === 'replayed')).toHaveLength(49);
      });
    });

    it('what one instance writes, another reads; a revocation on one is seen by the other', async () => {
      await withTwoInstances(async (a, b) => {
        const { client } = buildClient();
        expect(await a.clients.createClient(client)).toBe(true);
        expect(await b.clients.findClient(client.clientId)).toEqual(client);
        const access = buildToken();
        expect(await a.tokens.saveTokens(access, null, { authorizedAt: new Date() })).toBe(true);
        expect(await b.tokens.findAccessToken(access.tokenHash)).toEqual(access);
        await b.tokens.revokeGrant(access.grantId);
        expect(await a.tokens.findAccessToken(access.tokenHash)).toBeNull();
        const again = buildToken({ grantId: access.grantId });
        expect(await a.tokens.saveTokens(again, null, { authorizedAt: new Date() })).toBe(false);
      });
    });
  });

  describe(`races across two instances, ${ROUNDS} rounds each`, () => {
    it('a disable racing a secret rotation keeps both changes, every round', async () => {
      await withTwoInstances(async (a, b) => {
        for (let round = 0; round < ROUNDS; round++) {
          const { client } = buildClient();
          await a.clients.createClient(client);
          const rotated = `rotated-${round}`;
          await Promise.all([
            a.clients.updateClient(client.clientId, { disabled: true }),
            b.clients.updateClient(client.clientId, { clientSecretHash: rotated }),
          ]);
          for (const store of [a, b]) {
            expect(await store.clients.findClient(client.clientId)).toEqual({ ...client, disabled: true, clientSecretHash: rotated });
          }
        }
      });
    });

    for (const scope of ['integration', 'user'] as const) {
      it(`saveTokens racing revokeClientTokens (by ${scope}) leaves nothing authorized before it findable, every round`, async () => {
        await withTwoInstances(async (a, b) => {
          for (let round = 0; round < ROUNDS; round++) {
            const clientId = `client-${round}`;
            const authorizedAt = new Date();
            const make = () => buildTokenPair({ clientId, userId: 'user-1' });
            const before = make();
            await a.tokens.saveTokens(before.access, before.refresh, { authorizedAt });
            const revoke = () => b.tokens.revokeClientTokens(clientId, scope === 'user' ? 'user-1' : undefined);
            const saved = await saveWhile(a, revoke, make, { authorizedAt, saveFirst: round % 2 === 1 });
            await expectAllGone([a, b], [before.access, before.refresh, ...saved]);
            const late = make();
            expect(await a.tokens.saveTokens(late.access, late.refresh, { authorizedAt })).toBe(false);
            // A refresh token it deleted left its grant revoked: even a later-authorized save of it is refused.
            const refreshed = buildToken({ grantId: before.access.grantId, clientId, userId: 'user-1' });
            expect(await a.tokens.saveTokens(refreshed, null, { authorizedAt: new Date(Date.now() + 60_000) })).toBe(false);
          }
        });
      });
    }

    it('saveTokens racing revokeGrant leaves nothing of the grant findable, every round', async () => {
      await withTwoInstances(async (a, b) => {
        for (let round = 0; round < ROUNDS; round++) {
          const first = buildTokenPair();
          const authorizedAt = new Date();
          await a.tokens.saveTokens(first.access, first.refresh, { authorizedAt });
          const make = () => buildTokenPair({ grantId: first.access.grantId, clientId: first.access.clientId });
          const revoke = () => b.tokens.revokeGrant(first.access.grantId);
          const saved = await saveWhile(a, revoke, make, { authorizedAt, saveFirst: round % 2 === 1 });
          await expectAllGone([a, b], [first.access, first.refresh, ...saved]);
        }
      });
    });

    it('a save landing between two chunks of a large revocation is refused, and nothing revoked survives', async () => {
      await withTwoInstances(async (a, b) => {
        const clientId = 'busy-client';
        const authorizedAt = new Date();
        // 1200 tokens: the drain takes three chunks of 500.
        const issued = Array.from({ length: 1200 }, () => buildToken({ clientId, userId: null }));
        for (let i = 0; i < issued.length; i += 200) {
          await Promise.all(issued.slice(i, i + 200).map((t) => a.tokens.saveTokens(t, null, { authorizedAt })));
        }
        const make = () => ({ access: buildToken({ clientId, userId: null }), refresh: null });
        const racing = await saveWhile(a, () => b.tokens.revokeClientTokens(clientId), make, { authorizedAt, saveFirst: false });
        await expectAllGone([a, b], [...issued, ...racing]);
        expect((await keysOf(prefixOf.get(a)!)).filter((k) => k.includes(':at:'))).toEqual([]);
      });
    });
  });

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
        expect(await store.codes.consumeCode(code.codeHash)).toEqual({ kind: 'replayed', grantId: code.grantId });
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
