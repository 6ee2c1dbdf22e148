// Runs the built example app and the built admin CLI as child processes on a test's own store, as an operator would.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { startOnFreePorts, type StartOnFreePortsOptions } from './free-port.js';
import { CLUSTER_NODES, clusterStoreUrl, connectNodes, wipeClusterPrefix } from './redis-cluster.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SERVER = resolve(ROOT, 'example-app/dist/server.js');
const CLI = resolve(ROOT, 'dist/cli/main.js');
// Only a hung CLI reaches this; the test fails then instead of waiting for the runner's timeout.
const CLI_LIMIT_MS = 30_000;
// Every server this module started and that has not exited yet, so a failed start-up leaves none behind.
const running = new Set<ChildProcessWithoutNullStreams>();

/** One running example-app process. */
export interface AppProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The PORT it listens on. */
  readonly port: number;
  /** http://127.0.0.1:PORT */
  readonly base: string;
  /** What it printed up to "Press Ctrl+C to stop." (the demo credentials, on the start that created them). */
  readonly banner: string;
}

/**
 * Starts example-app/dist/server.js on `port`, a port the test must reuse (a restart on an earlier start's port);
 * resolves once its banner is printed (it listens then). A new server belongs on startAppProcess's free port.
 */
export function startAppProcessOn(port: number, env: Record<string, string>): Promise<AppProcess> {
  const child = spawn(process.execPath, [SERVER], { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port) } });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return new Promise((done, fail) => {
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('Press Ctrl+C to stop.')) done({ child, port, base: `http://127.0.0.1:${port}`, banner: stdout });
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    // At 'close', not 'exit': only then has all its stderr been read, so a lost port's EADDRINUSE is in the error.
    child.once('close', (code) => fail(new Error(`server on port ${port} exited with ${code}: ${stderr}`)));
  });
}

/**
 * Starts the example app on a free port; `env` may name that port (AUTH_URL). The app refuses PORT=0 (its defaults
 * name the port before it listens), so the port is chosen here, and a start that lost it to another process before
 * binding ("Cannot listen on port …: EADDRINUSE", nothing registered yet) is made again on another one.
 */
export function startAppProcess(
  env: Record<string, string> | ((port: number) => Record<string, string>), options: Pick<StartOnFreePortsOptions, 'avoiding'> = {},
): Promise<AppProcess> {
  return startOnFreePorts(1, ([port]) => startAppProcessOn(port!, typeof env === 'function' ? env(port!) : env), options);
}

/**
 * Starts `count` instances together (as they race to register the demo integrations on an empty store), each on a
 * free port of its own; `envFor` gets all the ports (one instance's AUTH_URL can be every instance's). When one lost
 * its port, the others are stopped, `beforeRetry` runs (empty the store one of them seeded) and all start again.
 */
export function startAppProcesses(
  count: 2, envFor: (ports: number[]) => Record<string, string>, options?: Pick<StartOnFreePortsOptions, 'beforeRetry'>,
): Promise<[AppProcess, AppProcess]>;
export function startAppProcesses(
  count: number, envFor: (ports: number[]) => Record<string, string>, options?: Pick<StartOnFreePortsOptions, 'beforeRetry'>,
): Promise<AppProcess[]>;
export function startAppProcesses(
  count: number, envFor: (ports: number[]) => Record<string, string>, options: Pick<StartOnFreePortsOptions, 'beforeRetry'> = {},
): Promise<AppProcess[]> {
  return startOnFreePorts(count, async (ports) => {
    const env = envFor(ports);
    const starts = await Promise.allSettled(ports.map((port) => startAppProcessOn(port, env)));
    const failed = starts.find((start) => start.status === 'rejected');
    if (!failed) return starts.map((start) => (start as PromiseFulfilledResult<AppProcess>).value);
    await Promise.all(starts.map((start) => (start.status === 'fulfilled' ? stopChild(start.value.child) : undefined)));
    throw failed.reason;
  }, options);
}

function stopChild(child: ChildProcessWithoutNullStreams): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/**
 * SIGTERMs every server started here that is still running (also those whose start-up failed or never
 * finished) and resolves when all have exited.
 */
export function stopAppProcesses(): Promise<void> {
  return Promise.all([...running].map(stopChild)).then(() => undefined);
}

/** What one `oauth-admin` run printed and how it ended. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node dist/cli/main.js ...args` against `storeUrl` (OAUTH_STORE); never rejects on a non-zero exit. */
export function runAdminCli(storeUrl: string, args: readonly string[]): Promise<CliRun> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], {
      cwd: ROOT, env: { ...process.env, OAUTH_STORE: storeUrl }, timeout: CLI_LIMIT_MS,
    }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

/** The value of `export NAME=value` in a banner, or null when that start did not print it. */
export function bannerExport(banner: string, name: string): string | null {
  return new RegExp(`export ${name}=(\\S+)`).exec(banner)?.[1] ?? null;
}

/** A store the processes can share: a URL no other test uses, and how to remove what the test left there. */
export interface SharedStoreBackend {
  readonly name: string;
  /** False when its OAUTH_TEST_*_URL variable is unset (the tests on it are skipped then). */
  readonly enabled: boolean;
  /** OAUTH_STORE for the processes. */
  readonly storeUrl: string;
  cleanup(): Promise<void>;
}

function withParam(url: string, param: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${param}`;
}

/**
 * PostgreSQL (OAUTH_TEST_POSTGRES_URL), Redis (OAUTH_TEST_REDIS_URL) and a Redis Cluster
 * (OAUTH_TEST_REDIS_CLUSTER_NODES), each on a schema `oauth_TAG_…` or key prefix `oauth-TAG-…:` of this run's own, so instances of one test share it and no other test sees it.
 */
export function sharedStoreBackends(tag: string): SharedStoreBackend[] {
  const pgUrl = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
  const redisUrl = process.env.OAUTH_TEST_REDIS_URL ?? '';
  const unique = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const schema = `oauth_${tag}_${unique}`;
  // OAUTH_TEST_REDIS_PREFIX: a run that shares its Redis with others keeps its keys under a prefix of its own.
  const prefix = `${process.env.OAUTH_TEST_REDIS_PREFIX ?? ''}oauth-${tag}-${unique}:`;
  return [
    {
      name: 'PostgreSQL',
      enabled: Boolean(pgUrl),
      storeUrl: withParam(pgUrl, `schema=${schema}`),
      async cleanup() {
        const admin = new pg.Client({ connectionString: pgUrl });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      },
    },
    {
      name: 'Redis',
      enabled: Boolean(redisUrl),
      storeUrl: withParam(redisUrl, `prefix=${prefix}`),
      async cleanup() {
        const admin = createClient({ url: redisUrl });
        await admin.connect();
        for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
          if (keys.length) await admin.del(keys);
        }
        admin.destroy();
      },
    },
    {
      name: 'Redis Cluster',
      enabled: CLUSTER_NODES.length > 0,
      storeUrl: clusterStoreUrl(prefix),
      async cleanup() {
        const nodes = await connectNodes();
        await wipeClusterPrefix(nodes, prefix);
        await Promise.all(nodes.map((n) => n.close()));
      },
    },
  ];
}
