// Redis replicates asynchronously: a revocation only the primary holds is lost when its replica is promoted.
// `waitForReplicas` reports such a write unavailable (503) instead of acknowledging it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, createClientPool } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, type RedisStore } from '../../src/stores/redis/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { buildClient, buildCode, buildConsent, buildKey, buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { until } from '../helpers/until.js';

// Three free ports (primary, replica, the proxy on the replication link): where set, redis-server is installed.
const PORTS = (process.env.OAUTH_TEST_REDIS_REPLICATION_PORTS ?? '').split(',').filter(Boolean).map(Number);
if (PORTS.length !== 3) {
  console.info('Redis replication tests skipped: set OAUTH_TEST_REDIS_REPLICATION_PORTS to three free ports (primary, replica, proxy)');
}
const WAIT = { replicas: 1, timeoutMs: 100 };

describe.skipIf(PORTS.length !== 3)('Redis store waitForReplicas: a write no replica holds is not acknowledged', () => {
  const [primaryPort, replicaPort, proxyPort] = PORTS as [number, number, number];
  const servers: ChildProcess[] = [];
  const stores: RedisStore[] = [];
  let dir = '';
  let link: FaultProxy;
  const url = (port: number): string => `redis://127.0.0.1:${port}`;
  const info = async (port: number): Promise<string> => {
    const admin = createClient({ url: url(port) });
    await admin.connect();
    try {
      return String(await admin.sendCommand(['INFO', 'replication']));
    } finally {
      await admin.quit();
    }
  };
  const open = async (port: number, wait: boolean): Promise<RedisStore> => {
    const store = await createRedisStore({ url: url(port), prefix: 'replica-wait:', sweepIntervalSeconds: 0, ...(wait ? { waitForReplicas: WAIT } : {}) });
    stores.push(store);
    return store;
  };
  const server = (port: number, ...args: string[]): void => {
    servers.push(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args], { stdio: 'ignore' }));
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-replica-wait-'));
    server(primaryPort);
    // The replica reaches its primary through the proxy, so a test can hold the replication stream back.
    link = await startFaultProxy({ host: '127.0.0.1', port: primaryPort }, proxyPort);
    server(replicaPort, '--replicaof', '127.0.0.1', String(proxyPort));
    await until('the replica in sync', async () => /master_link_status:up/.test(await info(replicaPort)), { everyMs: 100, tries: 200 });
  }, 30_000);

  afterAll(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    await link?.close();
    for (const child of servers) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a revocation is acknowledged once the replica holds it', async () => {
    const store = await open(primaryPort, true);
    const { access, refresh } = buildTokenPair({ userId: null });
    expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
    await store.tokens.revokeGrant(access.grantId);
    const replica = await open(replicaPort, false);
    expect(await replica.tokens.findAccessToken(access.tokenHash)).toBeNull();
  });

  it('with the replication stream held back, revocations, code use and token saves reject with StoreUnavailableError', async () => {
    const store = await open(primaryPort, true);
    const { access, refresh } = buildTokenPair({ userId: null });
    expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
    const code = buildCode();
    await store.codes.saveCode(code);
    link.setMode('hang');
    try {
      await expect(store.tokens.revokeAccessToken(access.tokenHash)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.tokens.revokeGrant(access.grantId)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.tokens.revokeClientTokens!(access.clientId)).rejects.toThrow(/NOREPLICAS/);
      await expect(store.codes.consumeCode(code.codeHash)).rejects.toBeInstanceOf(StoreUnavailableError);
      const fresh = buildTokenPair({ userId: null });
      await expect(store.tokens.saveTokens(fresh.access, fresh.refresh, { authorizedAt: new Date() })).rejects.toBeInstanceOf(StoreUnavailableError);
      // Rate-limit counters are not confirmed: one lost to a failover only lets a few more attempts through.
      await expect(store.rateLimits.hit('replica-wait', 60_000, new Date())).resolves.toBeDefined();
      // Nor is the sweep's pruning of expired index members (the integration index of the tokens saved above): a prune
      // lost to a failover is made again by the next sweep, and one refused would stop every sweep while a replica lags.
      await expect(store.sweepExpired()).resolves.toBeUndefined();
    } finally {
      link.setMode('down');
      link.setMode('up');
    }
    await until('the replica in sync again', async () => /master_link_status:up/.test(await info(replicaPort)), { everyMs: 100, tries: 200 });
  });

  it('with the replication stream held back, a signing key\'s deletion rejects with StoreUnavailableError: a leaked key deleted on the primary alone would come back with a promoted replica', async () => {
    const store = await open(primaryPort, true);
    const leaked = buildKey();
    expect(await store.keys.saveSigningKey(leaked)).toBe(true);
    link.setMode('hang');
    try {
      await expect(store.keys.deleteSigningKey!(leaked.kid)).rejects.toThrow(/NOREPLICAS/);
    } finally {
      link.setMode('down');
      link.setMode('up');
    }
    await until('the replica in sync again', async () => /master_link_status:up/.test(await info(replicaPort)), { everyMs: 100, tries: 200 });
  });

  it('with the replication stream held back, integration, consent, code-save and signing-key writes reject with StoreUnavailableError', async () => {
    const store = await open(primaryPort, true);
    const { client } = buildClient();
    expect(await store.clients.createClient(client)).toBe(true);
    const consent = buildConsent({ clientId: client.clientId });
    await store.consents.saveConsent(consent);
    link.setMode('hang');
    try {
      await expect(store.clients.createClient(buildClient().client)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.clients.updateClient(client.clientId, { name: 'renamed' })).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.clients.disableClient!(client.clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.clients.enableClient!(client.clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.clients.deleteClient!(client.clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.consents.saveConsent(buildConsent())).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.consents.revokeConsent(consent.userId, consent.clientId)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.codes.saveCode(buildCode())).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.keys.saveSigningKey(buildKey())).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.keys.replaceSigningKeys!(buildKey())).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      link.setMode('down');
      link.setMode('up');
    }
    await until('the replica in sync again', async () => /master_link_status:up/.test(await info(replicaPort)), { everyMs: 100, tries: 200 });
  });

  it('a node that became a replica between the write and its WAIT (a failover under way) is StoreUnavailableError, not a bug\'s error', async () => {
    // The host's client, so that the node can be demoted on the store's own connection between the script and the WAIT.
    const real = createClient({ url: url(primaryPort) });
    await real.connect();
    const admin = createClient({ url: url(primaryPort) });
    await admin.connect();
    let demote = false;
    const client = {
      get isOpen() { return real.isOpen; },
      async sendCommand(args: string[]): Promise<unknown> {
        if (args[0] === 'WAIT' && demote) {
          demote = false;
          await admin.sendCommand(['REPLICAOF', '127.0.0.1', '1']);
        }
        return real.sendCommand(args);
      },
    };
    const store = await createRedisStore({ client, prefix: 'replica-wait:', sweepIntervalSeconds: 0, waitForReplicas: WAIT });
    stores.push(store);
    const { access, refresh } = buildTokenPair({ userId: null });
    expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
    demote = true;
    try {
      await expect(store.tokens.revokeAccessToken(access.tokenHash)).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await admin.sendCommand(['REPLICAOF', 'NO', 'ONE']);
      await admin.quit();
      await real.quit();
    }
    await until('the replica in sync again', async () => /master_link_status:up/.test(await info(replicaPort)), { everyMs: 100, tries: 200 });
  });

  it('the WAIT leaves with its script, before the script is answered, so it is counted on the script\'s own connection', async () => {
    // A WAIT sent only after the script's answer could go out on a connection the client made since (node-redis's
    // offline queue, a host's client), which wrote nothing: WAIT would count every connected replica and confirm a
    // write no replica holds. Here the answers are held back and the proxy records what the client sends meanwhile.
    let sent = '';
    let holding = false;
    const held: (() => void)[] = [];
    const sockets: net.Socket[] = [];
    // Each connection's answers are held apart (the store's revocation feed has a connection of its own).
    const proxy = net.createServer((downstream) => {
      const upstream = net.connect(primaryPort, '127.0.0.1');
      sockets.push(downstream, upstream);
      downstream.on('data', (chunk: Buffer) => { sent += chunk.toString('latin1'); upstream.write(chunk); });
      upstream.on('data', (chunk: Buffer) => (holding ? held.push(() => downstream.write(chunk)) : downstream.write(chunk)));
      for (const socket of [downstream, upstream]) socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const real = createClient({ url: url((proxy.address() as net.AddressInfo).port) });
    await real.connect();
    try {
      const store = await createRedisStore({ client: real, prefix: 'replica-wait:', sweepIntervalSeconds: 0, waitForReplicas: WAIT });
      stores.push(store);
      const { access, refresh } = buildTokenPair({ userId: null });
      expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
      sent = '';
      holding = true;
      const revoked = store.tokens.revokeAccessToken(access.tokenHash);
      for (let tries = 0; tries < 40 && !(/EVAL/.test(sent) && /\r\nWAIT\r\n/.test(sent)); tries += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(sent).toMatch(/EVAL/);
      // Sent while the script's answer is still held: the same connection, whatever happens to it next.
      expect(sent).toMatch(/\r\nWAIT\r\n/);
      holding = false;
      for (const release of held.splice(0)) release();
      await revoked;
      expect(await store.tokens.findAccessToken(access.tokenHash)).toBeNull();
    } finally {
      await real.quit();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('without the option an acknowledged revocation the replica never received is undone by its promotion', async () => {
    const store = await open(primaryPort, false);
    const { access, refresh } = buildTokenPair({ userId: null });
    expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
    const replica = await open(replicaPort, false);
    await until('the token on the replica', async () => (await replica.tokens.findAccessToken(access.tokenHash)) !== null, { everyMs: 100, tries: 200 });
    link.setMode('hang');
    await store.tokens.revokeGrant(access.grantId);
    expect(await store.tokens.findAccessToken(access.tokenHash)).toBeNull();
    // The primary dies with the revocation in its replication stream; the replica is promoted.
    servers[0]!.kill('SIGKILL');
    link.setMode('down');
    const promoter = createClient({ url: url(replicaPort) });
    await promoter.connect();
    await promoter.sendCommand(['REPLICAOF', 'NO', 'ONE']);
    await promoter.quit();
    expect(await replica.tokens.findAccessToken(access.tokenHash)).not.toBeNull();
    expect(await replica.tokens.findRefreshToken(refresh.tokenHash)).not.toBeNull();
  });
});

describe('Redis store waitForReplicas: options', () => {
  it('refuses fewer than one replica, and a wait that the command timeout would cut short', async () => {
    const url = 'redis://127.0.0.1:1';
    await expect(createRedisStore({ url, waitForReplicas: { replicas: 0, timeoutMs: 100 } })).rejects.toThrow(/"waitForReplicas.replicas" must be an integer ≥ 1/);
    await expect(createRedisStore({ url, waitForReplicas: { replicas: 1, timeoutMs: 0 } })).rejects.toThrow(TypeError);
    await expect(createRedisStore({ url, commandTimeoutMs: 500, waitForReplicas: { replicas: 1, timeoutMs: 500 } }))
      .rejects.toThrow(/below "commandTimeoutMs" \(500\)/);
  });

  it.skipIf(!process.env.OAUTH_TEST_REDIS_URL)('refuses a client pool, whose WAIT would go out on whichever connection is free', async () => {
    const pool = createClientPool({ url: process.env.OAUTH_TEST_REDIS_URL! });
    await pool.connect();
    try {
      await expect(createRedisStore({ client: pool as never, waitForReplicas: { replicas: 1, timeoutMs: 100 } }))
        .rejects.toThrow(/"waitForReplicas" needs a "client" of one connection \(createClient\), not a pool/);
    } finally {
      pool.destroy();
    }
  });
});
