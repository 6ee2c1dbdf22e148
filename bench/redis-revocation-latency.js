// Notification latency of the Redis revocation feed: from a revocation by one store to another store's mark moving.
// node bench/redis-revocation-latency.js [samples]   (needs `npm run build` and OAUTH_TEST_REDIS_URL)
import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createClient } from 'redis';
import { createRedisStore } from '../dist/stores/redis/index.js';

const url = process.env.OAUTH_TEST_REDIS_URL;
if (!url) throw new Error('set OAUTH_TEST_REDIS_URL=redis://127.0.0.1:6379');
const samples = Number(process.argv[2] ?? 500);
const prefix = `oauth-feed-latency:${process.pid}:`;
const serving = await createRedisStore({ url, prefix });
const revoking = await createRedisStore({ url, prefix });

/** Resolves once `mark()` differs from `before`, checking on every turn of the event loop. */
function moved(before) {
  return new Promise((resolve) => {
    const check = () => (serving.revocations.mark() !== before ? resolve(performance.now()) : setImmediate(check));
    check();
  });
}

const sinceIssued = [];
const sinceResolved = [];
for (let i = 0; i < samples + 20; i += 1) {
  // Only a revocation that deletes a token is announced: save one first.
  const tokenHash = createHash('sha256').update(randomBytes(32)).digest('base64url');
  const token = {
    tokenHash, grantId: `latency-${i}`, clientId: 'latency', userId: 'user-1', scope: [], issuer: 'https://auth.example.com',
    expiresAt: new Date(Date.now() + 3_600_000),
  };
  await revoking.tokens.saveTokens(token, null, { authorizedAt: new Date() });
  const before = serving.revocations.mark();
  if (before === null) throw new Error('the serving store is not subscribed');
  const issued = performance.now();
  const arrived = moved(before);
  await revoking.tokens.revokeAccessToken(tokenHash);
  const resolved = performance.now();
  const at = await arrived;
  // The first runs warm up the scripts (EVALSHA after one EVAL) and the JIT.
  if (i < 20) continue;
  sinceIssued.push(at - issued);
  sinceResolved.push(Math.max(0, at - resolved));
}

const pct = (list, p) => [...list].sort((x, y) => x - y)[Math.min(list.length - 1, Math.floor((p / 100) * list.length))];
const row = (name, list) => `| ${name} | ${pct(list, 50).toFixed(2)} | ${pct(list, 99).toFixed(2)} | ${Math.max(...list).toFixed(2)} |`;
console.log(`${samples} revocations (revokeAccessToken) by one store, observed by another store's revocations.mark(), ms:`);
console.log('| from | median | p99 | max |');
console.log('|---|---|---|---|');
console.log(row('the revoking call issued', sinceIssued));
console.log(row('the revoking call resolved (0 if before)', sinceResolved));
await serving.close();
await revoking.close();
const admin = createClient({ url });
await admin.connect();
for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await admin.del(keys);
await admin.close();
