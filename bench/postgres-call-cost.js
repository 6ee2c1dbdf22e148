// The database's CPU per PostgreSQL store call of a code exchange, each call alone under concurrency, no HTTP.
// node bench/postgres-call-cost.js [--calls 8000] [--concurrency 10] [--rounds 2] [--integrations N]   (after npm run build)
// --integrations N: before the rounds, N more integrations, and N tombstones of each kind (integrations, users at them,
// grants), written straight into the tables and analysed, so the save's refusal checks meet tables of that size.
// Uses OAUTH_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test) and a schema of its own, dropped
// at the end. Reads every postgres process's CPU from /proc (database-cpu.js), so run it on an otherwise idle database.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createPostgresStore } from 'express-oauth-router/stores/postgres';
import { registerClient } from 'express-oauth-router';
import { databaseCpuMicros } from './database-cpu.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '8000' }, concurrency: { type: 'string', default: '10' }, rounds: { type: 'string', default: '2' },
    integrations: { type: 'string', default: '0' },
  },
});
const calls = Number(values.calls);
const integrations = Number(values.integrations);
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
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  if (integrations > 0) {
    const s = `"${schema}"`;
    await admin.query(`INSERT INTO ${s}.clients SELECT client_id || '-' || i, client_secret_hash, name, flow, redirect_uris,
        allowed_scopes, require_pkce, credentials_issued_at, created_at, disabled FROM ${s}.clients, generate_series(1, $1::int) i`, [integrations]);
    await admin.query(`INSERT INTO ${s}.client_revocations SELECT 'c' || i, now(), now() + interval '1 day' FROM generate_series(1, $1::int) i`, [integrations]);
    await admin.query(`INSERT INTO ${s}.user_revocations SELECT 'c' || i % 100, 'u' || i, now(), now() + interval '1 day' FROM generate_series(1, $1::int) i`, [integrations]);
    await admin.query(`INSERT INTO ${s}.grants SELECT 'g' || i, now(), now() + interval '1 day' FROM generate_series(1, $1::int) i`, [integrations]);
    await admin.query(`ANALYZE ${s}.clients, ${s}.client_revocations, ${s}.user_revocations, ${s}.grants`);
  }
  // The integration's revision, as a copy carries it (the client_credentials and refresh_token grants).
  const revision = (await admin.query(`SELECT xmin::text AS x FROM "${schema}".clients WHERE client_id = $1`, [client.clientId])).rows[0].x;
  await admin.end();
  console.log(`${calls} calls per row, ${concurrency} at a time, schema ${schema}, ${integrations} integrations and tombstones of each kind more`);
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
    await measure('  the same, a copy\'s revision', () => store.tokens.saveTokens(token(id(), null), null, { authorizedAt: new Date(), clientRevision: revision }));
    await measure('  the same, a copy\'s revision, newGrant', () => store.tokens.saveTokens(token(id(), null), null, { authorizedAt: new Date(), clientRevision: revision, newGrant: true }));
  }
} finally {
  await store.close();
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
