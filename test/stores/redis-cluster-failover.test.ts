// A Redis Cluster master dies for good and its replica takes over: the store follows the new slot map by itself,
// where node-redis alone waited for a MOVED reply that a dead node never sends (503s until the node came back).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from 'redis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/stores/redis/index.js';
import type { Store } from '../../src/stores/contract.js';
import { basic, createTestApp } from '../helpers/app.js';
import { freePort } from '../helpers/example-app-processes.js';

// The Redis Cluster suites' switch: where it is set, redis-server and redis-cli are installed.
const ENABLED = Boolean(process.env.OAUTH_TEST_REDIS_CLUSTER_NODES);
const run = promisify(execFile);
const PREFIX = 'failover:';


async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const cli = async (port: number, ...args: string[]): Promise<string> => (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;

describe.skipIf(!ENABLED)('Redis Cluster: a master lost for good, its replica promoted', () => {
  const servers = new Map<number, ChildProcess>();
  let dir = '';
  let ports: number[] = [];
  let store: Store | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-cluster-failover-'));
    ports = [];
    for (let i = 0; i < 6; i += 1) ports.push(await freePort());
    for (const port of ports) {
      servers.set(port, spawn('redis-server', [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', '1000', '--dir', dir, '--save', '', '--appendonly', 'no',
      ], { stdio: 'ignore' }));
    }
    for (const port of ports) await until(`node ${port}`, async () => ((await cli(port, 'ping')).trim() === 'PONG' ? true : undefined), 10_000);
    await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes']);
    // Every replica in sync with its master: only then can one be promoted.
    await until('three replicas in sync', async () => {
      const infos = await Promise.all(ports.map((port) => cli(port, 'info', 'replication')));
      return infos.filter((info) => /role:slave/.test(info) && /master_link_status:up/.test(info)).length === 3 ? true : undefined;
    }, 20_000);
    await until('cluster_state:ok everywhere', async () => {
      const infos = await Promise.all(ports.map((port) => cli(port, 'cluster', 'info')));
      return infos.every((info) => /cluster_state:ok/.test(info)) ? true : undefined;
    }, 20_000);
  }, 60_000);

  afterAll(async () => {
    await store?.close?.();
    for (const server of servers.values()) server.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('token requests for the dead master\'s slots are served again once the replica is promoted, without a restart', { timeout: 60_000 }, async () => {
    store = await createRedisStore({ cluster: { rootNodes: ports.map((port) => `redis://127.0.0.1:${port}`) }, prefix: PREFIX });
    const t = await createTestApp({ logger: { warn() {}, error() {} } }, store);
    const tokenRequest = () => request(t.app).post('/oauth2/token').type('form').set('Authorization', basic(t.credentialsClient))
      .send({ grant_type: 'client_credentials' });
    expect((await tokenRequest()).status).toBe(200);

    // The master that holds this store's token family: kill it, as a host dies.
    const slot = Number((await cli(ports[0]!, 'cluster', 'keyslot', `{${PREFIX}tokens}`)).trim());
    const admin = createClient({ url: `redis://127.0.0.1:${ports[0]}` });
    await admin.connect();
    const shards = (await admin.sendCommand(['CLUSTER', 'SLOTS'])) as [number, number, [string, number, string]][];
    await admin.quit();
    const owner = shards.find(([from, to]) => slot >= from && slot <= to)![2][1];
    servers.get(owner)!.kill('SIGKILL');
    const survivor = ports.find((port) => port !== owner)!;
    await until('the replica promoted', async () => {
      const nodes = await cli(survivor, 'cluster', 'nodes');
      const line = nodes.split('\n').find((row) => row.includes(`:${owner}@`));
      return line && /master,fail|fail/.test(line) && /cluster_state:ok/.test(await cli(survivor, 'cluster', 'info')) ? true : undefined;
    }, 20_000);

    // Served again while the dead node stays dead: the store read the new slot map itself.
    const served = await until('a token after the failover', async () => {
      const res = await tokenRequest();
      return res.status === 200 ? res : undefined;
    }, 15_000);
    expect(served.body.token_type).toBe('Bearer');
    for (let i = 0; i < 5; i += 1) expect((await tokenRequest()).status).toBe(200);
  });
});
