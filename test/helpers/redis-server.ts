// Starts a redis-server of a test's own (nothing kept on disk) and waits until it says it accepts connections.
import { spawn, type ChildProcess } from 'node:child_process';
import { startOnFreePorts } from './free-port.js';

/** A running redis-server a test started: kill it with `stop()`. */
export interface OwnRedisServer {
  readonly port: number;
  readonly url: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** Where startRedisServer listens. */
export interface RedisServerPorts {
  /** A port the test chose (OAUTH_TEST_PORT_BASE); default: a free one. */
  readonly port?: number | undefined;
  /**
   * Cluster mode (--cluster-enabled yes) on free ports, its cluster bus on one of its own: port + 10000, the default,
   * can be past 65535 or taken.
   */
  readonly cluster?: boolean;
}

/**
 * Spawns one try of redis-server on `port`; resolves once it logs that it accepts connections. That line is its own:
 * a PING could be answered by another test's redis-server that took the port first, while this one exits with
 * "Address already in use" (the rejection then says so).
 */
function spawnRedisServer(port: number, args: readonly string[]): Promise<OwnRedisServer> {
  // --logfile "" logs to stdout, where the readiness line and a failed bind's reason are read.
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args, '--logfile', ''], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async (): Promise<void> => {
    child.kill('SIGKILL');
  };
  return new Promise((done, fail) => {
    let log = '';
    let ready = false;
    const read = (chunk: string): void => {
      // Read for as long as it runs (a full pipe would block its logging), kept only until it is ready.
      if (ready) return;
      log += chunk;
      if (/Ready to accept connections/.test(log)) {
        ready = true;
        done({ port, url: `redis://127.0.0.1:${port}`, process: child, stop });
      }
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', read);
    child.once('error', fail);
    // At 'close', once all it logged is read: the reason of a failed bind is in the error.
    child.once('close', (code) => fail(new Error(`redis-server on port ${port} exited with ${code}: ${log}`)));
  });
}

/**
 * Spawns `redis-server` with `args` added (a function of its port, for file names that name it) and resolves once it
 * accepts connections. On a free port by default, and on another when the port was taken between choosing it and
 * redis-server's bind (redis-server cannot listen on port 0 and say where: 0 turns TCP off).
 */
export async function startRedisServer(
  args: readonly string[] | ((port: number) => readonly string[]) = [], { port, cluster = false }: RedisServerPorts = {},
): Promise<OwnRedisServer> {
  const argsFor = (listening: number): readonly string[] => (typeof args === 'function' ? args(listening) : args);
  if (port !== undefined && !cluster) return spawnRedisServer(port, argsFor(port));
  return startOnFreePorts(cluster ? 2 : 1, ([listening, bus]) => spawnRedisServer(listening!, [
    ...(cluster ? ['--cluster-enabled', 'yes', '--cluster-port', String(bus)] : []), ...argsFor(listening!),
  ]));
}
