// Free ports for servers a test starts in a child process, and start-up retried on new ports when one was taken.
import { createServer, type Server } from 'node:net';

/** How many sets of ports a start may try: each try loses only to another process binding in the same instant. */
const START_TRIES = 5;

function listenAnywhere(): Promise<Server> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => done(probe));
  });
}

/**
 * `count` distinct free TCP ports on 127.0.0.1 (the OS picks them; nothing listens on them afterwards). The probes are
 * all open before any closes, so the OS cannot hand out one port twice, as two freePort() calls in a row can.
 * A port is free only when it is read: whoever binds it next wins, so start a server on it with startOnFreePorts.
 */
export async function freePorts(count: number): Promise<number[]> {
  const probes: Server[] = [];
  try {
    for (let i = 0; i < count; i += 1) probes.push(await listenAnywhere());
    return probes.map((probe) => {
      const address = probe.address();
      if (!address || typeof address !== 'object') throw new Error('no port');
      return address.port;
    });
  } finally {
    await Promise.all(probes.map((probe) => new Promise<void>((done) => probe.close(() => done()))));
  }
}

/** One free TCP port on 127.0.0.1: see freePorts. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/** Whether a start failed because its port was taken: Node says EADDRINUSE, redis-server "Address already in use". */
export function isAddressInUse(error: unknown): boolean {
  return error instanceof Error && /EADDRINUSE|address already in use/i.test(error.message);
}

/** Options of startOnFreePorts. */
export interface StartOnFreePortsOptions {
  /** Undoes what a try that lost its port left elsewhere (rows a sibling process wrote, say). */
  readonly beforeRetry?: () => Promise<unknown>;
  /** Ports never given to `start`: an earlier server's, where a case needs another one. */
  readonly avoiding?: readonly number[];
}

/**
 * Runs `start` on `count` free ports; when it fails because one of them was taken (by another test's server, or
 * by any process's outgoing connection, whose local ports come from the same range) between freePorts() and the
 * child's bind, runs it again on new ports. `start` must leave nothing running when it rejects. Any other failure is
 * thrown at once.
 */
export async function startOnFreePorts<T>(
  count: number, start: (ports: number[]) => Promise<T>, { beforeRetry, avoiding = [] }: StartOnFreePortsOptions = {},
): Promise<T> {
  for (let tried = 1; ; tried += 1) {
    let ports = await freePorts(count);
    while (ports.some((port) => avoiding.includes(port))) ports = await freePorts(count);
    try {
      return await start(ports);
    } catch (error) {
      if (!isAddressInUse(error) || tried >= START_TRIES) throw error;
      await beforeRetry?.();
    }
  }
}
