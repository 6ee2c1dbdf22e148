// Notification latency of the PostgreSQL revocation feed: from a revocation by one store to another store's mark moving.
// node bench/postgres-revocation-latency.js [samples]   (needs `npm run build` and OAUTH_TEST_POSTGRES_URL)
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createPostgresStore } from '../dist/stores/postgres/index.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL;
if (!url) throw new Error('set OAUTH_TEST_POSTGRES_URL=postgres://user@host:5432/db');
const samples = Number(process.argv[2] ?? 500);
const schema = `oauth_feed_latency_${process.pid}`;
const options = { connectionString: url, schema, sweepIntervalSeconds: 0 };
const serving = await createPostgresStore(options);
const revoking = await createPostgresStore(options);

/** Resolves once `mark()` differs from `before`, checking on every turn of the event loop. */
function moved(before) {
  return new Promise((resolve) => {
    const check = () => (serving.revocations.mark() !== before ? resolve(performance.now()) : setImmediate(check));
    check();
  });
}

const sinceIssued = [];
const sinceCommitted = [];
for (let i = 0; i < samples + 20; i += 1) {
  const before = serving.revocations.mark();
  if (before === null) throw new Error('the serving store is not listening');
  const issued = performance.now();
  const arrived = moved(before);
  await revoking.tokens.revokeGrant(`latency-${i}`);
  const committed = performance.now();
  const at = await arrived;
  // The first runs warm up prepared statements and the JIT.
  if (i < 20) continue;
  sinceIssued.push(at - issued);
  sinceCommitted.push(Math.max(0, at - committed));
}

const pct = (list, p) => [...list].sort((x, y) => x - y)[Math.min(list.length - 1, Math.floor((p / 100) * list.length))];
const row = (name, list) => `| ${name} | ${pct(list, 50).toFixed(2)} | ${pct(list, 99).toFixed(2)} | ${Math.max(...list).toFixed(2)} |`;
console.log(`${samples} revocations (revokeGrant) by one store, observed by another store's revocations.mark(), ms:`);
console.log('| from | median | p99 | max |');
console.log('|---|---|---|---|');
console.log(row('the revoking call issued', sinceIssued));
console.log(row('the revoking call resolved (0 if before)', sinceCommitted));
await serving.close();
await revoking.close();
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await admin.end();
