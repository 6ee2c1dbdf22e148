// npm run bench:scale: the token endpoint and requireBearer at 1,000 and 1,000,000 live tokens per store (both sizes up at
// once, measured in alternating rounds); the memory store's bytes per token; requireBearer's latency while the sweep
// deletes 1,000,000 expired tokens.
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { failCli, parseCli } from './parse-cli.js';
import { startServer } from './spawn-server.js';
import { measure } from './measure.js';
import { tokenRequest } from './token-request.js';
import { markdownTable } from './format-table.js';
import { DEFAULT_POSTGRES_URL, DEFAULT_REDIS_URL } from './bench-stores.js';
import { createSeedTarget } from './scale-seed.js';
import { median } from './median.js';

const cli = parseCli(import.meta.url, {
  tokens: { type: 'string', default: '1000000' }, // the large size, and the number of expired tokens swept
  small: { type: 'string', default: '1000' },
  stores: { type: 'string', default: 'sqlite,postgres,redis' },
  clients: { type: 'string', default: '100' }, // seeded tokens are spread over this many integrations
  'memory-tokens': { type: 'string', default: '100000' },
  warmup: { type: 'string', default: '2' },
  duration: { type: 'string', default: '5' },
  connections: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '4' }, // per size, alternating; the ratio is the median of the rounds' ratios
  skip: { type: 'string', default: '' }, // comma-separated: sizes, sweep, memory
});
const int = (name, min, max) => {
  const value = Number(cli[name]);
  if (!Number.isInteger(value) || value < min || value > max) failCli(`--${name} must be an integer in ${min}..${max}`);
  return value;
};
const BIG = int('tokens', 1, 50_000_000);
const SMALL = int('small', 1, BIG);
const CLIENTS = int('clients', 1, 1_000_000);
const MEMORY_TOKENS = int('memory-tokens', 1, 10_000_000);
const WARMUP = int('warmup', 1, 30);
const DURATION = int('duration', 1, 60);
const CONNECTIONS = int('connections', 1, 256);
const ROUNDS = int('rounds', 1, 50);
const STORES = cli.stores.split(',').filter(Boolean);
const SKIP = new Set(cli.skip.split(',').filter(Boolean));
const urls = { postgresUrl: DEFAULT_POSTGRES_URL, redisUrl: DEFAULT_REDIS_URL };
const load = { connections: CONNECTIONS, warmupSeconds: WARMUP, durationSeconds: DURATION };

const seconds = (ms) => (ms / 1000).toFixed(1);
const timed = async (work) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

/** requireBearer with a different seeded token per request, drawn at random from tokens 0 … live − 1. */
function randomBearer(server, prefix, live) {
  return {
    url: `${server.url}/api/guarded`,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${prefix}${randomInt(live)}` } }) }],
  };
}

/** A server child on a seeded target's data, bearer cache off: each request is then a store lookup of a random token. */
function startSizeServer(target) {
  return startServer(['--app', 'oauth', ...target.serverArgs, '--sweep-seconds', '0', '--bearer-cache', 'off']);
}


/** The round with the median req/s of one size's measurements. */
function medianRound(results) {
  return [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)];
}

/**
 * Both sizes, each in a store and a server child of its own, both up at once, measured in alternating rounds
 * (the order swapped every round): a slow moment of the machine then falls on both sizes instead of one. Each
 * round's ratio is big ÷ small, and the median of the rounds' ratios is reported: one slow round moves a mean,
 * not a median. requireBearer's
 * rounds come first: the token endpoint's rounds add their own tokens (req/s × seconds, to both sizes alike),
 * which would blur the small store's size. With the bearer cache on, a repeated token would be served from process memory at
 * any size, so it is off.
 */
async function scaleRun(kind) {
  const sizes = [];
  try {
    for (const size of [SMALL, BIG]) {
      const prefix = `scale-${randomBytes(6).toString('base64url')}-`;
      const target = await createSeedTarget(kind, { ...urls, clients: CLIENTS, prefix });
      const entry = { size, prefix, target, server: null, guarded: [], token: [] };
      sizes.push(entry);
      const ms = await timed(() => target.seed(0, size));
      console.log(`${kind}: seeded ${size} tokens in ${seconds(ms)} s (${Math.round(size / (ms / 1000))} tokens/s)`);
      entry.seedMs = ms;
      entry.server = await startSizeServer(target);
    }
    const rounds = async (name, options) => {
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const entry of round % 2 === 0 ? sizes : [...sizes].reverse()) {
          entry[name].push(await measure({ ...options(entry), ...load, serverCpuUsage: entry.server.cpuUsage }));
        }
        const [small, big] = sizes;
        console.log(`${kind} round ${round + 1} ${name}: ${small.size} → ${small[name][round].rps.toFixed(0)} req/s, ${big.size} → ${big[name][round].rps.toFixed(0)} req/s`);
      }
    };
    await rounds('guarded', (entry) => randomBearer(entry.server, entry.prefix, entry.size));
    await rounds('token', (entry) => ({ url: `${entry.server.url}/oauth2/token`, ...tokenRequest(entry.server.clientId, entry.server.clientSecret) }));
    const [small, big] = sizes;
    const ratios = (name, of) => median(small[name].map((m, i) => of(big[name][i]) / of(m)));
    return {
      rows: sizes.map((entry) => ({ kind, size: entry.size, seedMs: entry.seedMs, guarded: medianRound(entry.guarded), token: medianRound(entry.token) })),
      tokenRatio: ratios('token', (m) => m.rps), tokenCpuRatio: ratios('token', (m) => 1 / m.cpuUs),
      bearerRatio: ratios('guarded', (m) => m.rps), bearerCpuRatio: ratios('guarded', (m) => 1 / m.cpuUs),
    };
  } finally {
    for (const entry of sizes) {
      await entry.server?.stop();
      await entry.target.drop();
    }
  }
}

/**
 * requireBearer (random live tokens, no cache) on a store holding SMALL live and BIG expired tokens: once with
 * the sweep off, once with it due one second into the measured window. Afterwards the expired rows are
 * counted until none is left (or two minutes pass), to tell how long the sweep took.
 */
async function sweepRun(kind) {
  const prefix = `sweep-${randomBytes(6).toString('base64url')}-`;
  const target = await createSeedTarget(kind, { ...urls, clients: CLIENTS, prefix });
  try {
    const seedMs = (await timed(() => target.seed(0, SMALL))) + (await timed(() => target.seed(SMALL, SMALL + BIG, { expired: true })));
    console.log(`${kind}: seeded ${SMALL} live + ${BIG} expired tokens in ${seconds(seedMs)} s`);
    const run = async (sweepSeconds) => {
      const server = await startServer(['--app', 'oauth', ...target.serverArgs, '--sweep-seconds', String(sweepSeconds), '--bearer-cache', 'off']);
      const ready = performance.now();
      try {
        // autocannon's request timeout raised from 10 s: a sweep that holds the event loop shows as latency here.
        const result = await measure({ ...randomBearer(server, prefix, SMALL), ...load, timeout: 120, serverCpuUsage: server.cpuUsage });
        if (sweepSeconds === 0) return { result };
        const leftAtEnd = await target.countExpired();
        let left = leftAtEnd;
        while (left > 0 && performance.now() - ready < 120_000) {
          await new Promise((resolve) => { setTimeout(resolve, 500); });
          left = await target.countExpired();
        }
        return { result, leftAtEnd, left, sweptAfterMs: left === 0 ? performance.now() - ready : null };
      } finally {
        await server.stop();
      }
    };
    const without = await run(0);
    const during = await run(WARMUP + 1);
    return { kind, without, during };
  } finally {
    await target.drop();
  }
}

function memoryPerToken() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(new URL('./scale-memory.js', import.meta.url)), '--tokens', String(MEMORY_TOKENS)], {
      stdio: ['ignore', 'pipe', 'inherit'], cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    let out = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`scale-memory.js exited with ${code}`))));
  });
}

// createPostgresStore against an unreachable server waits on unref'd timers only: without a handle of ours the
// process would exit (code 13) instead of hearing the rejection and skipping the store.
const keepAlive = setInterval(() => {}, 60_000);

console.log(`express-oauth-router scale bench: Node ${process.version}, ${availableParallelism()} cores, ${new Date().toISOString()}`);
console.log(`load average before the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`sizes ${SMALL} and ${BIG} live tokens over ${CLIENTS} integrations; stores ${STORES.join(', ')}; ${WARMUP} s warm-up + ${DURATION} s measured, ${CONNECTIONS} connections, ${ROUNDS} rounds per size, alternating\n`);

const skipped = [];
const optional = (kind) => kind !== 'sqlite';
const rows = [];
const ratioRows = [];
if (!SKIP.has('sizes')) {
  for (const kind of STORES) {
    let results;
    try {
      results = await scaleRun(kind);
    } catch (error) {
      if (!optional(kind)) throw error;
      skipped.push(`${kind} sizes: ${error.message}`);
      continue;
    }
    for (const r of results.rows) {
      rows.push([kind, String(r.size), seconds(r.seedMs),
        r.token.rps.toFixed(0), String(r.token.p99), r.token.cpuUs.toFixed(0),
        r.guarded.rps.toFixed(0), String(r.guarded.p99), r.guarded.cpuUs.toFixed(0)]);
    }
    const verdict = (ratio) => (ratio >= 0.9 ? 'meets' : 'misses');
    ratioRows.push([kind,
      results.tokenRatio.toFixed(2), results.tokenCpuRatio.toFixed(2),
      results.bearerRatio.toFixed(2), results.bearerCpuRatio.toFixed(2),
      `token ${verdict(results.tokenRatio)}, requireBearer ${verdict(results.bearerRatio)}`]);
  }
}

const sweepRows = [];
if (!SKIP.has('sweep')) {
  // Redis expires keys itself (native TTLs): the store has no sweep to measure.
  for (const kind of STORES.filter((k) => k !== 'redis')) {
    let r;
    try {
      r = await sweepRun(kind);
    } catch (error) {
      if (!optional(kind)) throw error;
      skipped.push(`${kind} sweep: ${error.message}`);
      continue;
    }
    const { without, during } = r;
    sweepRows.push([kind, String(BIG),
      `${without.result.p50} / ${without.result.p99} / ${without.result.max}`, without.result.rps.toFixed(0),
      `${during.result.p50} / ${during.result.p99} / ${during.result.max}`, during.result.rps.toFixed(0),
      String(during.leftAtEnd),
      during.leftAtEnd === 0 ? 'before the window ended'
        : during.sweptAfterMs === null ? `${during.left} left 120 s after start` : `${seconds(during.sweptAfterMs)} s after start`]);
  }
}

let memory = null;
if (!SKIP.has('memory')) memory = await memoryPerToken();

if (rows.length > 0) {
  console.log(`\nlive tokens seeded, then measured (requireBearer: a random seeded token per request, bearer cache off; each size's round of median req/s):\n`);
  console.log(markdownTable(
    ['store', 'live tokens', 'seeding s', 'token req/s', 'token p99 ms', 'token µs CPU/req', 'requireBearer req/s', 'requireBearer p99 ms', 'requireBearer µs CPU/req'],
    rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  ));
  console.log(`\n${BIG} ÷ ${SMALL} live tokens, the median of the ${ROUNDS} rounds' ratios (target: within 10 %, i.e. ≥ 0.90):\n`);
  console.log(markdownTable(
    ['store', 'token req/s ratio', 'token CPU/req ratio', 'requireBearer req/s ratio', 'requireBearer CPU/req ratio', 'verdict (req/s)'],
    ratioRows, ['l', 'r', 'r', 'r', 'r', 'l'],
  ));
}
if (sweepRows.length > 0) {
  console.log(`\nrequireBearer (random live token of ${SMALL}, bearer cache off) with ${BIG} expired tokens in the store; the sweep due ${WARMUP + 1} s after the server started (1 s into the measured window):\n`);
  console.log(markdownTable(
    ['store', 'expired tokens', 'no sweep: p50 / p99 / max ms', 'no sweep req/s', 'during the sweep: p50 / p99 / max ms', 'during req/s', 'expired left at window end', 'all swept (polled every 0.5 s after the window)'],
    sweepRows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  ));
}
if (memory) {
  console.log(`\nmemory store: ${memory.bytesPerToken.toFixed(0)} bytes of heap per live token (${memory.tokens} client_credentials access tokens; heap after gc ${(memory.heapBefore / 1e6).toFixed(1)} → ${(memory.heapAfter / 1e6).toFixed(1)} MB)`);
}
for (const reason of skipped) console.log(`\nnot measured: ${reason}`);
console.log(`\nload average after the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
clearInterval(keepAlive);
