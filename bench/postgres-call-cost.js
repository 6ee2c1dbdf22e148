// The database's CPU per PostgreSQL store call of a code exchange, each call alone under concurrency, no HTTP.
// node bench/postgres-call-cost.js [--calls 8000] [--concurrency 10] [--rounds 2]   (after npm run build)
// Uses OAUTH_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test) and a schema of its own, dropped
// at the end. Reads every postgres process's CPU from /proc (database-cpu.js), so run it on an otherwise idle database.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createPostgresStore } from 'express-oauth-router/stores/postgres';
import { registerClient } from 'express-oauth-router';
import { databaseCpuMicros } from './database-cpu.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '8000' }, concurrency: { type: 'string', default: '10' }, rounds: { type: 'string', default: '2' } },
});
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
const url = process.env.OAUTH_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_calls_${process.pid}_${randomBytes(4).toString('hex')}`;
const store = await createPostgresStore({ connectionString: url, schema, sweepIntervalSeconds: 0 });
const id = () => randomBytes(32).toString('base64url').slice(0, 43);
const inAnHour = () => new Date(Date.now() + 3_600_000);

/** Runs `call(i)` for i < calls, `concurrency` at a time; prints calls/s and the database's µs of CPU per call. */
async function measure(label, call) {
  const cpuBefore = databaseCpuMicros('postgres');
  const from = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < calls) await call(next++);
  }));
  const seconds = (performance.now() - from) / 1000;
  const cpu = databaseCpuMicros('postgres') - cpuBefore;
  console.log(`${label.padEnd(42)} ${String(Math.round(calls / seconds)).padStart(6)} calls/s  database ${Math.round(cpu / calls)} µs CPU/call`);
}

try {
  const { client } = await registerClient(store, { name: 'Bench', flow: 'authorization_code', redirectUris: ['https://app.example/cb'], allowedScopes: [] });
  const token = (grantId, userId) => ({ tokenHash: id(), grantId, clientId: client.clientId, userId, scope: [], issuer: 'https://auth.example', expiresAt: inAnHour() });
  console.log(`${calls} calls per row, ${concurrency} at a time, schema ${schema}`);
  for (let round = 1; round <= Number(values.rounds); round += 1) {
    const codes = Array.from({ length: calls }, () => ({
      codeHash: id(), grantId: id(), clientId: client.clientId, userId: 'user-1', redirectUri: 'https://app.example/cb', scope: [],
      codeChallenge: null, issuer: 'https://auth.example', issuedAt: new Date(), expiresAt: new Date(Date.now() + 600_000),
    }));
    for (let i = 0; i < calls; i += 100) await Promise.all(codes.slice(i, i + 100).map((code) => store.codes.saveCode(code)));
    console.log(`round ${round}`);
    await measure('clients.findClient', () => store.clients.findClient(client.clientId));
    await measure('codes.consumeCode', (i) => store.codes.consumeCode(codes[i].codeHash));
    await measure('tokens.saveTokens, access + refresh, a user', (i) => store.tokens.saveTokens(
      token(codes[i].grantId, 'user-1'), token(codes[i].grantId, 'user-1'), { authorizedAt: new Date() }));
    await measure('tokens.saveTokens, access, no user', () => store.tokens.saveTokens(token(id(), null), null, { authorizedAt: new Date() }));
  }
} finally {
  await store.close();
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
