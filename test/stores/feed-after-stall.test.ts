// A request queued while the process was frozen or its loop blocked is refused when its token was revoked meanwhile.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { builtInStores, withOpenedStore } from '../helpers/built-in-stores.js';

const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js');

/** A keep-alive connection that sends `GET /api/v1/me` and reads each answer's status. */
function keepAlive(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buffered = '';
  const waiting: ((status: number) => void)[] = [];
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    for (;;) {
      const head = /^HTTP\/1\.1 (\d+)[^]*?\r\n\r\n/.exec(buffered);
      if (!head) return;
      const length = Number(/content-length: (\d+)/i.exec(head[0])?.[1] ?? 0);
      if (buffered.length < head[0].length + length) return;
      buffered = buffered.slice(head[0].length + length);
      waiting.shift()?.(Number(head[1]));
    }
  });
  return {
    ready: once(socket, 'connect'),
    /** Writes the request now (synchronously into the kernel when the socket is writable); resolves its status. */
    send(token: string, path = '/api/v1/me'): Promise<number> {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: auth.test\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      return new Promise((done) => waiting.push(done));
    },
    end: () => socket.destroy(),
  };
}

// PostgreSQL and Redis hear revocations on a socket of their feed (SQLite reads the file at each bearer check).
const stores = builtInStores('stall').filter(([label]) => label === 'PostgreSQL' || label === 'Redis');

describe.each(stores)('%s revocation feed after a stall', (_label, available, open) => {
  it.skipIf(!available)('refuses a request queued during the stall whose token another process revoked during it', () => withOpenedStore(open, async ({ store, storeUrl }) => {
    const test: TestApp = await createTestApp({}, store);
    let stallOnce = (): void => undefined;
    test.app.get('/stall', (_req, res) => {
      res.json({});
      stallOnce();
    });
    const server = test.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const { clientId, clientSecret } = test.credentialsClient;
    let served = 0;
    try {
      for (let round = 0; round < 3; round++) {
        const issued = await fetch(`http://127.0.0.1:${port}/oauth2/token`, {
          method: 'POST',
          headers: { host: 'auth.test', authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials',
        });
        const token = ((await issued.json()) as { access_token: string }).access_token;
        const connection = keepAlive(port);
        await connection.ready;
        for (let i = 0; i < 3; i++) expect(await connection.send(token)).toBe(200);
        // The process stops right after answering, as a serverless platform freezes it once the response is out (or
        // a debugger pauses it): blocked in this handler, its loop is where a frozen one is. The CLI revokes (its
        // PUBLISH lands unread in the feed's socket), then the next request is written behind it, on the connection
        // the loop has just served, and both wait for the loop to turn.
        let answer: Promise<number> | undefined;
        stallOnce = () => {
          const blockedAt = performance.now();
          execFileSync(process.execPath, [CLI, 'tokens', 'revoke', '--client', clientId], {
            env: { ...process.env, OAUTH_STORE: storeUrl! },
          });
          answer = connection.send(token);
          while (performance.now() - blockedAt < 1500);
        };
        expect(await connection.send(token, '/stall')).toBe(200);
        if ((await answer!) === 200) served += 1;
        connection.end();
      }
    } finally {
      server.close();
    }
    expect(served).toBe(0);
  }), 30_000);
});
