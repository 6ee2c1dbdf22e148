// Redis store across instances: two connections on one key prefix racing codes, client changes and revocations.
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdministrationStore } from '../../src/stores/contract.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { buildClient, buildCode, buildToken, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { CLUSTER_NODES, CLUSTER_ROOT_NODES, connectNodes, keysPerNode, wipeClusterPrefix } from '../helpers/redis-cluster.js';
import { expectAllGone, saveWhile, withTwoInstances, type InstancePair } from '../helpers/store-races.js';

const url = process.env.OAUTH_TEST_REDIS_URL ?? '';
if (!url) console.info('Redis race tests skipped: set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379 to run them');

const ROUNDS = 200;
let counter = 0;
/** A key prefix no other test (or parallel test file) uses, so every store starts empty. */
function freshPrefix(): string {
  counter += 1;
  return `oauth-test:${process.pid}:${counter}:${Math.random().toString(36).slice(2, 8)}:`;
}

const admin = createClient({ url });

/** The prefix's keys, found with SCAN (never KEYS), as an operator would. */
async function keysOf(prefix: string): Promise<string[]> {
  const all: string[] = [];
  for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) all.push(...batch);
  return all.sort();
}

/** Two instances are two connections on one prefix, wiped after the test; the Redis store has every tier. */
const REDIS_PAIR: InstancePair<AdministrationStore> = {
  freshNamespace: freshPrefix,
  async open(prefix) {
    // Connection losses are what the outage tests cause: no need to log them.
    const logger = { warn: () => undefined };
    return (await createRedisStore({ url, prefix, commandTimeoutMs: 2000, logger })) as AdministrationStore;
  },
  async wipe(prefix) {
    const keys = await keysOf(prefix);
    if (keys.length) await admin.del(keys);
  },
};

let nodes: Awaited<ReturnType<typeof connectNodes>> = [];

/** The same races on a Redis Cluster: two cluster connections on one prefix (the token family is one slot). */
const CLUSTER_PAIR: InstancePair<AdministrationStore> = {
  freshNamespace: freshPrefix,
  async open(prefix) {
    const logger = { warn: () => undefined };
    return (await createRedisStore({ cluster: { rootNodes: CLUSTER_ROOT_NODES }, prefix, commandTimeoutMs: 2000, logger })) as AdministrationStore;
  },
  wipe: (prefix) => wipeClusterPrefix(nodes, prefix),
};

/** Each backend the races run on, when its variable is set: a plain Redis, and a Redis Cluster. */
const BACKENDS = [
  {
    name: 'Redis store',
    enabled: Boolean(url),
    pair: REDIS_PAIR,
    keysOf,
    connect: async () => void (await admin.connect()),
    close: () => admin.close(),
  },
  {
    name: 'Redis store on a Redis Cluster',
    enabled: CLUSTER_NODES.length > 0,
    pair: CLUSTER_PAIR,
    keysOf: async (prefix: string) => (await keysPerNode(nodes, prefix)).flat().sort(),
    connect: async () => void (nodes = await connectNodes()),
    close: () => Promise.all(nodes.map((n) => n.close())),
  },
];

for (const { name, enabled, pair: REDIS_PAIR, keysOf, connect, close } of BACKENDS) describe.skipIf(!enabled)(name, () => {
  beforeAll(connect);
  afterAll(async () => {
    await close();
  });

  describe('across instances', () => {
    it('of 50 concurrent consumeCode calls spread over two instances exactly one wins', async () => {
      await withTwoInstances(REDIS_PAIR, async (a, b) => {
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
      await withTwoInstances(REDIS_PAIR, async (a, b) => {
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
      await withTwoInstances(REDIS_PAIR, async (a, b) => {
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
        await withTwoInstances(REDIS_PAIR, async (a, b) => {
          for (let round = 0; round < ROUNDS; round++) {
            const clientId = `client-${round}`;
            const authorizedAt = new Date();
            const make = () => buildTokenPair({ clientId, userId: 'user-1' });
            const before = make();
            await a.tokens.saveTokens(before.access, before.refresh, { authorizedAt });
            const revoke = () => b.tokens.revokeClientTokens(clientId, scope === 'user' ? 'user-1' : undefined);
            const { tried: saved } = await saveWhile(a, revoke, make, { authorizedAt, workers: 1, saveFirst: round % 2 === 1 });
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
      await withTwoInstances(REDIS_PAIR, async (a, b) => {
        for (let round = 0; round < ROUNDS; round++) {
          const first = buildTokenPair();
          const authorizedAt = new Date();
          await a.tokens.saveTokens(first.access, first.refresh, { authorizedAt });
          const make = () => buildTokenPair({ grantId: first.access.grantId, clientId: first.access.clientId });
          const revoke = () => b.tokens.revokeGrant(first.access.grantId);
          const { tried: saved } = await saveWhile(a, revoke, make, { authorizedAt, workers: 1, saveFirst: round % 2 === 1 });
          await expectAllGone([a, b], [first.access, first.refresh, ...saved]);
        }
      });
    });

    it('a save landing between two chunks of a large revocation is refused, and nothing revoked survives', async () => {
      await withTwoInstances(REDIS_PAIR, async (a, b, prefix) => {
        const clientId = 'busy-client';
        const authorizedAt = new Date();
        // 1200 tokens: the drain takes three chunks of 500.
        const issued = Array.from({ length: 1200 }, () => buildToken({ clientId, userId: null }));
        for (let i = 0; i < issued.length; i += 200) {
          await Promise.all(issued.slice(i, i + 200).map((t) => a.tokens.saveTokens(t, null, { authorizedAt })));
        }
        const make = () => ({ access: buildToken({ clientId, userId: null }), refresh: null });
        const revoke = () => b.tokens.revokeClientTokens(clientId);
        const { tried: racing } = await saveWhile(a, revoke, make, { authorizedAt, workers: 1, saveFirst: false });
        await expectAllGone([a, b], [...issued, ...racing]);
        expect((await keysOf(prefix)).filter((k) => /[:}]at:/.test(k))).toEqual([]);
      });
    });
  });
});
