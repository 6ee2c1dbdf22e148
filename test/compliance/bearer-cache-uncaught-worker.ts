// Child process for bearer-cache-revocation.test.ts: a host whose own 'request' listener throws to an uncaughtException handler.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { createTestApp, createTestRouter } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { hashToken } from '../../src/crypto/hash-token.js';

/** What the worker reports: the status line each connection got, and how many times the host's listener threw. */
export interface UncaughtReport {
  readonly statusLines: string[];
  readonly thrown: number;
}

const CONNECTIONS = 21;
const dir = mkdtempSync(join(tmpdir(), 'bearer-cache-uncaught-'));
const file = join(dir, 'oauth.db');
const store = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
const t = await createTestApp({}, store);
const token = await clientCredentialsToken(t.app, t.credentialsClient);
const oauth = createTestRouter(store);
const other = new Database(file);
const request = `GET /checked HTTP/1.1\r\nHost: auth.test\r\nAuthorization: Bearer ${token}\r\n\r\n`;

let armed = false;
let throwFor: unknown = null;
let thrown = 0;
// The host's last resort: it logs and goes on, as some do. Node then ends the throwing callback without running
// the ticks it queued, until the next callback ends.
process.on('uncaughtException', () => { thrown += 1; });
const app = express();
app.get('/checked', oauth.requireBearer(), (req, res) => {
  // The first request the server reads: its check has read data_version. Another connection revokes the token, and
  // the host's own listener then throws for this request.
  if (armed) {
    armed = false;
    other.prepare('DELETE FROM tokens WHERE token_hash = ?').run(hashToken(token));
    throwFor = req;
  }
  res.json({ ok: true });
});
const server = createServer(app);
server.on('request', (req: unknown) => {
  if (req === throwFor) throw new Error('a host request listener failed');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const open = (): Promise<Socket> => new Promise((resolve, reject) => {
  const socket = connect(port, '127.0.0.1', () => resolve(socket));
  socket.once('error', reject);
});
// Cached: looked up, then served from the cache.
for (let i = 0; i < 2; i += 1) {
  const res = await fetch(`http://127.0.0.1:${port}/checked`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`warm-up answered ${res.status}`);
}
const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, open));
await new Promise((resolve) => setTimeout(resolve, 100));
const statusLines: string[] = [];
const done = new Promise<void>((resolve) => {
  for (const socket of sockets) {
    socket.once('data', (chunk: Buffer) => {
      statusLines.push(chunk.toString('latin1').split('\r\n')[0]!);
      if (statusLines.length === CONNECTIONS) resolve();
    });
  }
});
armed = true;
// Every request is in the kernel before the server reads any: they are read one socket per I/O callback.
for (const socket of sockets) socket.write(request);
await done;
for (const socket of sockets) socket.destroy();
process.send?.({ statusLines, thrown } satisfies UncaughtReport);
other.close();
await store.close();
server.closeAllConnections();
await new Promise((resolve) => server.close(resolve));
rmSync(dir, { recursive: true, force: true });
process.disconnect?.();
