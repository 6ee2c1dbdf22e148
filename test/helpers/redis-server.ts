// Starts a redis-server of a test's own (nothing kept on disk) and waits until it answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { createClient } from 'redis';
import { freePort } from './example-app-processes.js';
import { until } from './until.js';

/** A running redis-server a test started: kill it with `stop()`. */
export interface OwnRedisServer {
  readonly port: number;
  readonly url: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Spawns `redis-server` on `port` (default: a free one) with `args` added, and resolves once a PING is answered.
 * Each try is a client of its own that never reconnects: a node-redis client whose first connect was refused keeps
 * reconnecting by itself, and its every later connect() throws "Socket already opened", so a wait that reused one
 * client timed out whenever the server was slower to listen than the first try.
 */
export async function startRedisServer(args: readonly string[] = [], port?: number): Promise<OwnRedisServer> {
  const listening = port ?? (await freePort());
  const child = spawn('redis-server', ['--port', String(listening), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${listening}`;
  const stop = async (): Promise<void> => {
    child.kill('SIGKILL');
  };
  try {
    await until('redis-server to listen', async () => {
      const probe = createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 1000 } });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } finally {
        if (probe.isOpen) probe.destroy();
      }
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { port: listening, url, process: child, stop };
}
