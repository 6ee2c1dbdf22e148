// The stores' own cost per token lookup and per token save at 1,000 and at 1,000,000 live tokens, in one process, rounds alternating.
// node bench/scale-store.js [--stores sqlite,postgres,redis] [--tokens 1000000] [--small 1000] [--ops 20000]
//   [--rounds 4] [--concurrency 10] [--clients 100]
//
// bench/scale.js answers issue 10's question through HTTP, where this VM's noise (±0.1–0.3 between runs) is larger
// than the effect asked about. This script takes the HTTP server out: two stores of one kind, one seeded with
// --small and one with --tokens live tokens (bench/scale-seed.js, random keys: the worst case for lookups), are
// opened in this process and called directly, the two sizes alternating within each round (their order swapped
// every round), so a slow moment of the VM falls on both. Lookups: `findAccessToken` of a random seeded token
// (what `requireBearer` asks on a cache miss). Saves: `saveTokens` of a fresh client_credentials access token
// (what the token endpoint writes), --concurrency calls in flight, so SQLite's group commit batches them as under
// load. Reported per operation: this process's CPU (user + system; a networked store's server CPU is not in it)
// and wall time, medians of the rounds, and the ratio small ÷ big (1.00 = no cost of size; issue 10 asks ≥ 0.90) as
// the median of the rounds' ratios: one slow round (PostgreSQL's first lookups of a fresh schema read 387 µs
// against 26–31 after) moves a mean, not a median.
import { parseArgs } from 'node:util';
import { median } from './median.js';
import { createSeedTarget, SEED_SCOPE } from './scale-seed.js';
import { DEFAULT_POSTGRES_URL, DEFAULT_REDIS_URL, openPostgresStore, openRedisStore } from './bench-stores.js';

const { values: cli } = parseArgs({
  options: {
    stores: { type: 'string', default: 'sqlite' },
    tokens: { type: 'string', default: '1000000' },
    small: { type: 'string', default: '1000' },
    ops: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '10' },
    clients: { type: 'string', default: '100' },
  },
});
const int = (name, min) => {
  const value = Number(cli[name]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
  return value;
};
const BIG = int('tokens', 1);
const SMALL = int('small', 1);
const OPS = int('ops', 1);
const ROUNDS = int('rounds', 1);
const CONCURRENCY = int('concurrency', 1);
const CLIENTS = int('clients', 1);
const { hashSecret, hashToken } = await import('express-oauth-router');
const { createOrderedToken } = await import('../dist/crypto/ordered-token.js');
const { createGrantId } = await import('../dist/crypto/random-grant-id.js');

/** Opens a store in this process on a seeded target's data (the same arguments bench/server.js takes). */
async function openStore(kind, target, cleanups) {
  const args = target.serverArgs;
  const arg = (name) => args[args.indexOf(name) + 1];
  if (kind === 'sqlite') {
    const { createSqliteStore } = await import('express-oauth-router/stores/sqlite');
    const store = createSqliteStore({ filename: arg('--sqlite-file'), sweepIntervalSeconds: 0 });
    cleanups.push(() => store.close());
    return store;
  }
  if (kind === 'postgres') return openPostgresStore(arg('--pg-url'), arg('--pg-schema'), { sweepIntervalSeconds: 0 }, cleanups);
  return openRedisStore(arg('--redis-url'), arg('--redis-prefix'), cleanups);
}

/** Runs `op(i)` for i in 0..count−1, `CONCURRENCY` at a time; returns CPU and wall µs per call. */
async function measure(count, op) {
  let next = 0;
  const worker = async () => {
    while (next < count) await op(next++);
  };
  const cpu = process.cpuUsage();
  const from = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / count, wall: ((performance.now() - from) * 1000) / count };
}


async function runStore(kind) {
  const urls = { postgresUrl: DEFAULT_POSTGRES_URL, redisUrl: DEFAULT_REDIS_URL };
  const cleanups = [];
  const sizes = [];
  try {
    for (const size of [SMALL, BIG]) {
      const prefix = `ss${size}-${process.pid}-`;
      const target = await createSeedTarget(kind, { ...urls, clients: CLIENTS, prefix });
      cleanups.push(() => target.drop());
      const started = performance.now();
      for (let from = 0; from < size; from += 200_000) await target.seed(from, Math.min(size, from + 200_000));
      console.log(`${kind}: ${size} tokens seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      sizes.push({ size, prefix, store: await openStore(kind, target, cleanups), lookup: [], save: [] });
    }
    const issuer = 'http://127.0.0.1/scale-store';
    const lookup = (entry, hashes) => async (i) => {
      if (!(await entry.store.tokens.findAccessToken(hashes[i]))) throw new Error(`${kind}: a seeded token was not found`);
    };
    const save = (entry) => async (i) => {
      const access = {
        tokenHash: hashToken(createOrderedToken()), grantId: createGrantId(), clientId: `scale-client-${i % CLIENTS}`,
        userId: null, scope: SEED_SCOPE, issuer, expiresAt: new Date(Date.now() + 3_600_000),
      };
      if (!(await entry.store.tokens.saveTokens(access, null, { authorizedAt: new Date() }))) throw new Error(`${kind}: a save was refused`);
    };
    const randomHashes = (entry, count) => Array.from({ length: count }, () => hashSecret(`${entry.prefix}${Math.floor(Math.random() * entry.size)}`));
    for (const entry of sizes) { // warm-up: the JIT, the connections, the caches
      await measure(Math.ceil(OPS / 4), lookup(entry, randomHashes(entry, Math.ceil(OPS / 4))));
      await measure(Math.ceil(OPS / 4), save(entry));
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? sizes : [...sizes].reverse();
      for (const entry of order) {
        const hashes = randomHashes(entry, OPS);
        entry.lookup.push(await measure(OPS, lookup(entry, hashes)));
        entry.save.push(await measure(OPS, save(entry)));
      }
      const line = (op) => sizes.map((entry) => `${entry.size} ${entry[op][round].cpu.toFixed(2)} / ${entry[op][round].wall.toFixed(2)}`).join(', ');
      console.log(`${kind} round ${round + 1} (µs CPU / wall per call): lookup ${line('lookup')}; save ${line('save')}`);
    }
    const rows = [];
    for (const op of ['lookup', 'save']) {
      const [small, big] = sizes.map((entry) => ({
        cpu: median(entry[op].map((m) => m.cpu)), wall: median(entry[op].map((m) => m.wall)),
      }));
      const ratio = (of) => median(sizes[0][op].map((m, i) => of(m) / of(sizes[1][op][i]))).toFixed(2);
      rows.push(`| ${kind} | ${op} | ${small.cpu.toFixed(2)} | ${big.cpu.toFixed(2)} | ${ratio((m) => m.cpu)} | ${small.wall.toFixed(2)} | ${big.wall.toFixed(2)} | ${ratio((m) => m.wall)} |`);
    }
    return rows;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

console.log(`Node ${process.version}; ${SMALL} vs ${BIG} live tokens; ${OPS} operations per size and round, ${ROUNDS} rounds, ${CONCURRENCY} in flight\n`);
const rows = [];
for (const kind of cli.stores.split(',').filter(Boolean)) rows.push(...(await runStore(kind)));
console.log(`\n| store | operation | µs CPU/op at ${SMALL} | at ${BIG} | ratio (CPU) | µs wall/op at ${SMALL} | at ${BIG} | ratio (wall) |`);
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
