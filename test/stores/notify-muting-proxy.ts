// A TCP proxy in front of PostgreSQL that can drop NOTIFY deliveries while passing everything else (a pooler that does not pass them on).
import net from 'node:net';

export interface NotifyMutingProxy {
  readonly port: number;
  /** `true`: NotificationResponse messages from the server are dropped; queries still get their answers. */
  mute(muted: boolean): void;
  close(): Promise<void>;
}

/**
 * Starts the proxy on 127.0.0.1 in front of `target`. The client must not ask for TLS (the server's stream is then
 * framed from its first byte: a type byte and an Int32 length that counts itself), as pg does without `sslmode`.
 * @see https://www.postgresql.org/docs/current/protocol-message-formats.html (NotificationResponse, 'A')
 */
export async function startNotifyMutingProxy(target: { host: string; port: number }): Promise<NotifyMutingProxy> {
  let muted = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(socket);
      });
    }
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const kept: Buffer[] = [];
      while (pending.length >= 5) {
        const size = 1 + pending.readInt32BE(1);
        if (pending.length < size) break;
        const message = pending.subarray(0, size);
        if (!(muted && message[0] === 0x41)) kept.push(message);
        pending = pending.subarray(size);
      }
      if (kept.length) client.write(Buffer.concat(kept));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    mute(value) {
      muted = value;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
