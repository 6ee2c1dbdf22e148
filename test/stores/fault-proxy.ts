// A TCP proxy for outage tests: forwards to a real server, or drops or black-holes connections on demand.
import net from 'node:net';

/** `up` forwards; `down` resets every connection (server stopped); `hang` accepts and never answers. */
export type ProxyMode = 'up' | 'down' | 'hang';

export interface FaultProxy {
  readonly port: number;
  /** Connections accepted so far, in every mode: a client's connection attempts, counted. */
  readonly accepted: number;
  /** When each of them was accepted (`performance.now()`), oldest first: how far apart a client's attempts came. */
  readonly acceptedAt: readonly number[];
  /** Connections accepted and not yet closed by the peer: what a client left open. */
  readonly open: number;
  setMode(mode: ProxyMode): void;
  close(): Promise<void>;
}

/**
 * Starts a proxy on 127.0.0.1 in front of `target` (host:port, read at each connection: it may be set after the
 * proxy starts), on `port` (default: an ephemeral one).
 */
export async function startFaultProxy(target: { host: string; port: number }, port = 0): Promise<FaultProxy> {
  let mode: ProxyMode = 'up';
  let accepted = 0;
  const acceptedAt: number[] = [];
  const pairs = new Set<[net.Socket, net.Socket | null]>();
  const server = net.createServer((client) => {
    accepted += 1;
    acceptedAt.push(performance.now());
    client.on('error', () => undefined);
    if (mode === 'down') return void client.destroy();
    if (mode === 'hang') {
      const hung: [net.Socket, net.Socket | null] = [client, null];
      pairs.add(hung);
      // Read and dropped, so the peer's close is seen.
      client.resume();
      client.on('close', () => pairs.delete(hung));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
    const pair: [net.Socket, net.Socket | null] = [client, upstream];
    pairs.add(pair);
    client.on('close', () => pairs.delete(pair));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    acceptedAt,
    get open() {
      return pairs.size;
    },
    setMode(next) {
      mode = next;
      for (const pair of pairs) {
        const [client, upstream] = pair;
        if (next === 'down') {
          client.destroy();
          upstream?.destroy();
          pairs.delete(pair);
        } else if (next === 'hang' && upstream) {
          // Stop forwarding both ways but keep the sockets open: the peer waits for an answer forever.
          client.unpipe(upstream);
          upstream.unpipe(client);
          client.pause();
          upstream.pause();
        }
      }
    },
    async close() {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Whether the connections `proxy` accepted after its first `from` include two in a row `ms` or more apart: every
 * client reconnecting through it then waits that long between attempts, whatever number of connections (a node's,
 * a subscriber's, a cluster's discovery) one attempt opens. Counting attempts instead assumed that number.
 */
export function backedOff(proxy: FaultProxy, from: number, ms: number): boolean {
  const times = proxy.acceptedAt;
  for (let i = from + 1; i < times.length; i += 1) if (times[i]! - times[i - 1]! >= ms) return true;
  return false;
}
