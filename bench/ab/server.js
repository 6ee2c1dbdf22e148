// A/B server child of bench/ab/run.js: the token endpoint (or a bare route) of the build in <root>/dist.
// node bench/ab/server.js <root> <baseline|memory|sqlite|sqlite-code|postgres> [full|normal|writer-thread]
// sqlite-code: the SQLite store with an authorization_code integration and CODES_PER_SERVER codes minted (bench/mint-codes.js).
// postgres: a fresh schema at OAUTH_BENCH_POSTGRES_URL (default the local test database), dropped at stop.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
const [root, kind, sync] = process.argv.slice(2);
// Warm-up and measured seconds at up to 10,000 exchanges a second, one code each.
const CODES_PER_SERVER = 150_000;
const require = createRequire(join(root, 'package.json'));
const express = require('express');
const app = express();
const server = createServer(app);
const cleanups = [];
process.on('message', (m) => { if (m === 'cpu-usage') process.send({ cpuUsage: process.cpuUsage() }); });
const stop = async () => { server.closeAllConnections(); server.close(); for (const c of cleanups.reverse()) { try { await c(); } catch {} } process.exit(0); };
process.on('SIGTERM', stop); process.on('disconnect', stop);
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address();
let extra = {};
let sqliteFile;
if (kind === 'baseline') app.get('/baseline', (_q, s) => { s.json({ ok: true }); });
else {
  const { createOAuthRouter, registerClient } = await import(join(root, 'dist/index.js'));
  let store;
  if (kind === 'sqlite' || kind === 'sqlite-code') {
    const { createSqliteStore } = await import(join(root, 'dist/stores/sqlite/index.js'));
    const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'tokbench-'));
    const threaded = sync === 'writer-thread';
    sqliteFile = join(dir, 'oauth.sqlite');
    store = createSqliteStore({ filename: sqliteFile, ...(sync && !threaded ? { synchronous: sync } : {}) });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanups.push(() => store.close());
    // The experiment of bench/ab/writer-thread.js: saves on a worker thread's connection (synchronous FULL).
    if (threaded) cleanups.push(await (await import('./writer-thread.js')).moveWritesToThread(root, store, join(dir, 'oauth.sqlite')));
  } else if (kind === 'postgres') {
    const { createPostgresStore } = await import(join(root, 'dist/stores/postgres/index.js'));
    const url = process.env.OAUTH_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `oauth_ab_${process.pid}`;
    store = await createPostgresStore({ connectionString: url, schema, sweepIntervalSeconds: 0 });
    cleanups.push(async () => {
      const pg = require('pg');
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    cleanups.push(() => store.close());
  } else {
    const { createMemoryStore } = await import(join(root, 'dist/stores/memory/index.js'));
    store = createMemoryStore();
  }
  const a = `http://127.0.0.1:${port}`;
  const oauth = createOAuthRouter(store, { verifyCredentials: async () => null }, { issuer: a, legacy: { issuer: `${a}/legacy` }, session: { secret: 'bench-session-secret-not-used-by-these-routes' } });
  const { client, clientSecret } = await registerClient(store, { name: 'bench', flow: 'client_credentials', allowedScopes: ['bench:read'] });
  app.use(oauth.router);
  extra = { clientId: client.clientId, clientSecret };
  if (kind === 'sqlite-code') {
    // The minting helper of the build under test, with its own copy of the package.
    const { mintCodes } = await import(join(root, 'bench/mint-codes.js'));
    extra = { ...extra, ...(await mintCodes({ store, sqliteFile, issuer: a, count: CODES_PER_SERVER })) };
  }
}
process.stdout.write(JSON.stringify({ ready: true, port, ...extra }) + '\n');
