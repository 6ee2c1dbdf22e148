// A Redis Cluster slot moves (a reshard) while a store with `waitForReplicas` still holds the old slot map: the WAIT
// must be answered by the node that ran the write script, not by the node the script was first sent to.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, createCluster, type RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, type RedisStore } from '../../src/stores/redis/index.js';
import * as scripts from '../../src/stores/redis/scripts.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildCode, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { until } from '../helpers/until.js';

// Three free ports (a primary, its replica, a primary without one): where set, redis-server is installed.
const PORTS = (process.env.OAUTH_TEST_REDIS_RESHARD_PORTS ?? '').split(',').filter(Boolean).map(Number);
if (PORTS.length !== 3) {
  console.info('Redis Cluster reshard tests skipped: set OAUTH_TEST_REDIS_RESHARD_PORTS to three free ports (primary, its replica, a primary without replica)');
}
const WAIT = { replicas: 1, timeoutMs: 100 };
const PREFIX = 'reshard:';

describe('Redis Cluster waitForReplicas: a cluster client the store cannot send a pair through', () => {
  it('is refused at creation, naming the option', async () => {
    // Only `sendCommand`, which follows MOVED and ASK for one command: a WAIT sent beside it could go to another node.
    const clusterClient = { isOpen: true, sendCommand: async () => 'OK' };
    await expect(createRedisStore({ clusterClient, waitForReplicas: WAIT })).rejects.toThrow(/"waitForReplicas" on a Redis Cluster needs node-redis 5's cluster client/);
  });
});

describe.skipIf(PORTS.length !== 3)('Redis Cluster waitForReplicas: a slot moved since the store read the map', () => {
  // `replicated` has `replica` and holds every slot from 100 on at the start (the store's token family's among them);
  // `bare` holds the first 100 and has no replica, so a WAIT it answers counts 0, and one `replicated` answers counts 1.
  const [replicated, replica, bare] = PORTS as [number, number, number];
  const servers: ChildProcess[] = [];
  const admins = new Map<number, RedisClientType>();
  const stores: RedisStore[] = [];
  const ids = new Map<number, string>();
  let dir = '';
  const admin = (port: number): RedisClientType => admins.get(port)!;
  const command = async (port: number, ...args: string[]): Promise<unknown> => admin(port).sendCommand(args);
  /** WAITs the node has answered so far. */
  const waits = async (port: number): Promise<number> =>
    Number(/cmdstat_wait:calls=(\d+)/.exec(String(await command(port, 'INFO', 'commandstats')))?.[1] ?? 0);
  const slotOf = async (key: string): Promise<string> => String(await command(replicated, 'CLUSTER', 'KEYSLOT', key));

  /** Starts moving `slot` (MIGRATING on `from`, IMPORTING on `to`): `from` answers ASK for keys it no longer has. */
  async function beginMove(slot: string, from: number, to: number): Promise<void> {
    await command(to, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', ids.get(from)!);
    await command(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', ids.get(to)!);
  }
  /** Moves the slot's keys and gives it to `to`, as `redis-cli --cluster reshard` does: `from` then answers MOVED. */
  async function finishMove(slot: string, from: number, to: number): Promise<void> {
    for (;;) {
      const keys = (await command(from, 'CLUSTER', 'GETKEYSINSLOT', slot, '100')) as string[];
      if (keys.length === 0) break;
      await command(from, 'MIGRATE', '127.0.0.1', String(to), '', '0', '5000', 'KEYS', ...keys);
    }
    await command(to, 'CLUSTER', 'SETSLOT', slot, 'NODE', ids.get(to)!);
    await command(from, 'CLUSTER', 'SETSLOT', slot, 'NODE', ids.get(to)!);
  }
  const open = async (): Promise<RedisStore> => {
    const store = await createRedisStore({
      cluster: { rootNodes: [`redis://127.0.0.1:${replicated}`] }, prefix: PREFIX, sweepIntervalSeconds: 0, waitForReplicas: WAIT, logger: { warn() {} },
    });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-cluster-reshard-'));
    for (const port of PORTS) {
      servers.push(spawn('redis-server', [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--dir', dir, '--save', '', '--appendonly', 'no',
        // `bare` stays a primary when it hands its last slot back (Redis 7 would make it `replicated`'s replica).
        '--cluster-allow-replica-migration', 'no',
        // The replica's first sync starts at once, not after the default 5 s wait for more replicas.
        '--repl-diskless-sync-delay', '0',
      ], { stdio: 'ignore' }));
    }
    for (const port of PORTS) {
      await until(`node ${port}`, async () => {
        const client = createClient({ url: `redis://127.0.0.1:${port}` });
        client.on('error', () => undefined);
        await client.connect();
        admins.set(port, client as RedisClientType);
        return true;
      }, { everyMs: 50, tries: 200 });
      ids.set(port, String(await command(port, 'CLUSTER', 'MYID')));
    }
    await command(bare, 'CLUSTER', 'ADDSLOTSRANGE', '0', '99');
    await command(replicated, 'CLUSTER', 'ADDSLOTSRANGE', '100', '16383');
    // Each pair met directly: quicker than waiting for gossip to introduce `replica` and `bare` to each other.
    for (const [from, to] of [[replicated, replica], [replicated, bare], [replica, bare]] as const) {
      await command(from, 'CLUSTER', 'MEET', '127.0.0.1', String(to));
    }
    await until('every node known everywhere', async () => {
      for (const port of PORTS) if (!/cluster_known_nodes:3\b/.test(String(await command(port, 'CLUSTER', 'INFO')))) return false;
      return true;
    }, { everyMs: 50, tries: 200 });
    await until('the replica attached', async () => (await command(replica, 'CLUSTER', 'REPLICATE', ids.get(replicated)!)) === 'OK', { everyMs: 50, tries: 200 });
    await until('the replica in sync and the cluster ok everywhere', async () => {
      if (!/master_link_status:up/.test(String(await command(replica, 'INFO', 'replication')))) return false;
      for (const port of PORTS) if (!/cluster_state:ok/.test(String(await command(port, 'CLUSTER', 'INFO')))) return false;
      return true;
    }, { everyMs: 50, tries: 200 });
    // Each node of a cluster in service has run the store's scripts for the slots it holds: a node a slot moves to
    // runs EVALSHA at once (a NOSCRIPT there makes the store send EVAL, with a WAIT of its own, after the map was read).
    const sources = Object.values(scripts).flatMap((s) => (typeof s === 'object' && 'source' in s ? [s.source] : []));
    for (const port of PORTS) for (const source of sources) await command(port, 'SCRIPT', 'LOAD', source);
  }, 30_000);

  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    for (const client of admins.values()) client.destroy();
    for (const child of servers) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('MOVED: the WAIT is answered by the node the write moved to, both ways', async () => {
    const store = await open();
    const tokens = await slotOf(`{${PREFIX}tokens}`);
    const { access, refresh } = buildTokenPair({ userId: null });
    expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);

    // The store's map still says `replicated`: the revocation (one script, no read before it) is sent there, answered
    // MOVED, and run on `bare`, which has no replica: held by one node only, it must not be confirmed (503).
    await beginMove(tokens, replicated, bare);
    await finishMove(tokens, replicated, bare);
    const tokenKey = `{${PREFIX}tokens}at:${access.tokenHash}`;
    expect(await command(bare, 'EXISTS', tokenKey)).toBe(1);
    const before = { replicated: await waits(replicated), bare: await waits(bare) };
    await expect(store.tokens.revokeAccessToken(access.tokenHash)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await command(bare, 'EXISTS', tokenKey)).toBe(0);
    // The first pair went to `replicated`, which answered the script MOVED (the WAIT it answered is dropped), the
    // second to `bare`: the WAIT that counts is the one of the node that ran the script.
    expect({ replicated: await waits(replicated) - before.replicated, bare: await waits(bare) - before.bare }).toEqual({ replicated: 1, bare: 1 });

    // And back: the store's map (read again on the MOVED) says `bare`; the save runs on `replicated`, whose replica holds it.
    await beginMove(tokens, bare, replicated);
    await finishMove(tokens, bare, replicated);
    const back = { replicated: await waits(replicated), bare: await waits(bare) };
    const fresh = buildTokenPair({ userId: null });
    expect(await store.tokens.saveTokens(fresh.access, fresh.refresh, { authorizedAt: new Date() })).toBe(true);
    expect({ replicated: await waits(replicated) - back.replicated, bare: await waits(bare) - back.bare }).toEqual({ replicated: 1, bare: 1 });
    expect(await store.tokens.findAccessToken(fresh.access.tokenHash)).not.toBeNull();
  });

  it('ASK: a write to a slot being migrated runs on the importing node, and its WAIT goes there too', async () => {
    const store = await open();
    let code = buildCode();
    while (Number(await slotOf(`${PREFIX}code:${code.codeHash}`)) < 100) code = buildCode();
    const slot = await slotOf(`${PREFIX}code:${code.codeHash}`);
    // A new key in a migrating slot: `replicated` does not have it, so it answers ASK and `bare` takes the write.
    await beginMove(slot, replicated, bare);
    const before = { replicated: await waits(replicated), bare: await waits(bare) };
    await expect(store.codes.saveCode(code)).rejects.toBeInstanceOf(StoreUnavailableError);
    // `replicated` answered the script ASK (and a WAIT, dropped); `bare` ran it after ASKING, and answered its WAIT.
    expect({ replicated: await waits(replicated) - before.replicated, bare: await waits(bare) - before.bare }).toEqual({ replicated: 1, bare: 1 });
    await finishMove(slot, replicated, bare);
    expect(await command(bare, 'EXISTS', `${PREFIX}code:${code.codeHash}`)).toBe(1);
  });

  it('a host\'s cluster client (clusterClient) sends the pair to the node that runs the script too', async () => {
    const cluster = createCluster({ rootNodes: [{ url: `redis://127.0.0.1:${replicated}` }] });
    cluster.on('error', () => undefined);
    await cluster.connect();
    try {
      const store = await createRedisStore({ clusterClient: cluster, prefix: PREFIX, sweepIntervalSeconds: 0, waitForReplicas: WAIT });
      const tokens = await slotOf(`{${PREFIX}tokens}`);
      const { access, refresh } = buildTokenPair({ userId: null });
      expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
      await beginMove(tokens, replicated, bare);
      await finishMove(tokens, replicated, bare);
      await expect(store.tokens.revokeAccessToken(access.tokenHash)).rejects.toBeInstanceOf(StoreUnavailableError);
      await beginMove(tokens, bare, replicated);
      await finishMove(tokens, bare, replicated);
      await store.close();
    } finally {
      await cluster.close();
    }
  });
});
