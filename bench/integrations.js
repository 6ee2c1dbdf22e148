// node bench/integrations.js: the token endpoint (client_credentials, HTTP Basic) and requireBearer (opaque tokens, bearer
// cache on) with 1 integration vs 10,000, each request from a random integration with its own secret and its own token
// (both sizes up at once, measured in alternating rounds); each server's RSS and live heap at the end; and, in servers of
// their own with the store's calls counted, the store calls per request once every integration has been seen, which
// tells an in-process copy or cache that misses or starts over.
import { randomInt } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { failCli, parseCli } from './parse-cli.js';
import { startServer } from './spawn-server.js';
import { measure } from './measure.js';
import { tokenRequest } from './token-request.js';
import { markdownTable } from './format-table.js';
import { DEFAULT_POSTGRES_URL, DEFAULT_REDIS_URL } from './bench-stores.js';
import { integrationId, integrationSecret } from './bench-integrations.js';
import { median } from './median.js';
import { databaseCpuMicros, redisServerPid } from './database-cpu.js';

const cli = parseCli(import.meta.url, {
  integrations: { type: 'string', default: '10000' }, // the large size
  small: { type: 'string', default: '1' },
  stores: { type: 'string', default: 'sqlite,postgres,redis,memory' },
  warmup: { type: 'string', default: '2' },
  duration: { type: 'string', default: '5' },
  connections: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '3' }, // per size, alternating; the ratio is the median of the rounds' ratios
  'count-requests': { type: 'string', default: '2000' }, // per kind and size in the counted servers (0: none)
  skip: { type: 'string', default: '' }, // comma-separated: timed, counts
});
const int = (name, min, max) => {
  const value = Number(cli[name]);
  if (!Number.isInteger(value) || value < min || value > max) failCli(`--${name} must be an integer in ${min}..${max}`);
  return value;
};
const BIG = int('integrations', 1, 1_000_000);
const SMALL = int('small', 1, BIG);
const WARMUP = int('warmup', 1, 30);
const DURATION = int('duration', 1, 60);
const CONNECTIONS = int('connections', 1, 256);
const ROUNDS = int('rounds', 1, 50);
const COUNT_REQUESTS = int('count-requests', 0, 1_000_000);
const STORES = cli.stores.split(',').filter(Boolean);
const SKIP = new Set(cli.skip.split(',').filter(Boolean));
const load = { connections: CONNECTIONS, warmupSeconds: WARMUP, durationSeconds: DURATION };
const storeArgs = {
  sqlite: ['--store', 'sqlite'], memory: ['--store', 'memory'],
  postgres: ['--store', 'postgres', '--pg-url', DEFAULT_POSTGRES_URL], redis: ['--store', 'redis', '--redis-url', DEFAULT_REDIS_URL],
};

/** Integration i's Basic header, made once: the load side's cost is not the server's. */
const basicHeaders = (size) => Array.from({ length: size }, (_, i) => tokenRequest(integrationId(i), integrationSecret(i)).headers.authorization);

/** Runs `work(i)` for i in 0 … n − 1, `width` at a time. */
async function pool(n, width, work) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, n) }, async () => {
    while (next < n) await work(next++);
  }));
}

/** A server with `size` integrations, one access token minted for each, and each token checked once by requireBearer
 * (so the bearer cache has seen every one before anything is measured). */
async function startSizeServer(kind, size, extra = []) {
  if (!storeArgs[kind]) throw new Error(`unknown store ${kind}`);
  const server = await startServer(['--app', 'oauth', ...storeArgs[kind], '--integrations', String(size), ...extra], { nodeArgs: ['--expose-gc'] });
  const headers = basicHeaders(size);
  const tokens = new Array(size);
  try {
    await pool(size, CONNECTIONS, async (i) => {
      const response = await fetch(`${server.url}/oauth2/token`, { ...tokenRequest(integrationId(i), integrationSecret(i)) });
      const body = await response.json();
      if (response.status !== 200) throw new Error(`token for integration ${i}: ${response.status} ${JSON.stringify(body)}`);
      tokens[i] = body.access_token;
    });
    await pool(size, CONNECTIONS, async (i) => {
      const response = await fetch(`${server.url}/api/guarded`, { headers: { authorization: `Bearer ${tokens[i]}` } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`requireBearer for integration ${i}: ${response.status}`);
    });
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { server, size, headers, bearers: tokens.map((token) => `Bearer ${token}`) };
}

/** Each request from a random integration of the server's: its own Basic header, or its own token. */
function randomTokenRequest(entry) {
  return {
    url: `${entry.server.url}/oauth2/token`, ...tokenRequest(integrationId(0), integrationSecret(0)),
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, authorization: entry.headers[randomInt(entry.size)] } }) }],
  };
}
function randomBearerRequest(entry) {
  return {
    url: `${entry.server.url}/api/guarded`,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, authorization: entry.bearers[randomInt(entry.size)] } }) }],
  };
}

const medianRound = (results) => [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)];

/** Both sizes up at once, measured in alternating rounds (order swapped every round), requireBearer's rounds first. */
async function timedRun(kind) {
  const sizes = [];
  // The database server's CPU per request (bench/database-cpu.js), as bench/run.js reports it: all of it is counted.
  const redisPid = kind === 'redis' ? await redisServerPid(DEFAULT_REDIS_URL) : undefined;
  const databaseCpu = kind === 'postgres' || kind === 'redis' ? () => databaseCpuMicros(kind, redisPid) : undefined;
  try {
    for (const size of [SMALL, BIG]) {
      const started = performance.now();
      sizes.push({ ...(await startSizeServer(kind, size)), guarded: [], token: [] });
      console.log(`${kind}: ${size} integrations registered, a token each, each checked once, in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    const rounds = async (name, options) => {
      for (let round = 0; round < ROUNDS; round += 1) {
        for (const entry of round % 2 === 0 ? sizes : [...sizes].reverse()) {
          entry[name].push(await measure({ ...options(entry), ...load, serverCpuUsage: entry.server.cpuUsage, databaseCpuMicros: databaseCpu }));
        }
        const line = sizes.map((e) => `${e.size} → ${e[name][round].rps.toFixed(0)} req/s ${e[name][round].cpuUs.toFixed(0)} µs`).join(', ');
        console.log(`${kind} round ${round + 1} ${name}: ${line}`);
      }
    };
    await rounds('guarded', randomBearerRequest);
    await rounds('token', randomTokenRequest);
    for (const entry of sizes) entry.memory = await entry.server.memoryUsage();
    const [small, big] = sizes;
    const ratios = (name, of) => median(small[name].map((m, i) => of(big[name][i]) / of(m)));
    return {
      rows: sizes.map((e) => ({ size: e.size, token: medianRound(e.token), guarded: medianRound(e.guarded), memory: e.memory })),
      tokenRatio: ratios('token', (m) => m.rps), tokenCpuRatio: ratios('token', (m) => 1 / m.cpuUs),
      bearerRatio: ratios('guarded', (m) => m.rps), bearerCpuRatio: ratios('guarded', (m) => 1 / m.cpuUs),
    };
  } finally {
    for (const entry of sizes) await entry.server.stop();
  }
}

/**
 * Store calls per request (bench/counting-store.js), in a server of its own per size, after every integration has
 * asked for a token and had it checked once: a copy or cache that holds every integration answers with none.
 */
async function countRun(kind, size) {
  const entry = await startSizeServer(kind, size, ['--count']);
  try {
    const take = async () => (await fetch(`${entry.server.url}/__bench/store-calls`)).json();
    await take();
    const perRequest = (counts) => Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / COUNT_REQUESTS]));
    await pool(COUNT_REQUESTS, CONNECTIONS, async () => {
      const response = await fetch(`${entry.server.url}/oauth2/token`, { method: 'POST', headers: { authorization: entry.headers[randomInt(size)], 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`counted token request: ${response.status}`);
    });
    const token = perRequest(await take());
    await pool(COUNT_REQUESTS, CONNECTIONS, async () => {
      const response = await fetch(`${entry.server.url}/api/guarded`, { headers: { authorization: entry.bearers[randomInt(size)] } });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`counted requireBearer: ${response.status}`);
    });
    const guarded = perRequest(await take());
    return { token, guarded };
  } finally {
    await entry.server.stop();
  }
}

const mb = (bytes) => (bytes / 1e6).toFixed(0);
const describe = (counts) => Object.entries(counts).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ') || 'none';

console.log(`express-oauth-router integrations bench: Node ${process.version}, ${availableParallelism()} cores, ${new Date().toISOString()}`);
console.log(`load average before the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`${SMALL} vs ${BIG} integrations, a random one per request; stores ${STORES.join(', ')}; ${WARMUP} s warm-up + ${DURATION} s measured, ${CONNECTIONS} connections, ${ROUNDS} rounds per size, alternating\n`);

const rows = [];
const ratioRows = [];
const countRows = [];
const skipped = [];
const optional = (kind) => kind === 'postgres' || kind === 'redis';
for (const kind of STORES) {
  try {
    if (!SKIP.has('timed')) {
      const r = await timedRun(kind);
      for (const row of r.rows) {
        const db = (m) => (m.dbCpuUs === null ? '–' : m.dbCpuUs.toFixed(0));
        rows.push([kind, String(row.size),
          row.token.rps.toFixed(0), row.token.cpuUs.toFixed(0), db(row.token), row.guarded.rps.toFixed(0), row.guarded.cpuUs.toFixed(0), db(row.guarded),
          mb(row.memory.rss), mb(row.memory.heapUsed)]);
      }
      ratioRows.push([kind, r.tokenRatio.toFixed(2), r.tokenCpuRatio.toFixed(2), r.bearerRatio.toFixed(2), r.bearerCpuRatio.toFixed(2)]);
    }
    if (!SKIP.has('counts') && COUNT_REQUESTS > 0) {
      for (const size of [SMALL, BIG]) {
        const c = await countRun(kind, size);
        countRows.push([kind, String(size), describe(c.token), describe(c.guarded)]);
      }
    }
  } catch (error) {
    if (!optional(kind)) throw error;
    skipped.push(`${kind}: ${error.message}`);
  }
}

if (rows.length > 0) {
  console.log(`\nrandom integration per request (each round's figures are the median-req/s round's; RSS and heap after a full GC at the end of the run):\n`);
  console.log(markdownTable(
    ['store', 'integrations', 'token req/s', 'token µs CPU/req', 'token database µs/req', 'requireBearer req/s', 'requireBearer µs CPU/req', 'requireBearer database µs/req', 'RSS MB', 'heap used MB'],
    rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  ));
  console.log(`\n${BIG} ÷ ${SMALL} integrations, the median of the ${ROUNDS} rounds' ratios (target: ≥ 0.90):\n`);
  console.log(markdownTable(['store', 'token req/s ratio', 'token CPU/req ratio', 'requireBearer req/s ratio', 'requireBearer CPU/req ratio'], ratioRows, ['l', 'r', 'r', 'r', 'r']));
}
if (countRows.length > 0) {
  console.log(`\nstore calls per request, ${COUNT_REQUESTS} random requests of each kind after every integration was seen once (counted servers, untimed):\n`);
  console.log(markdownTable(['store', 'integrations', 'token request', 'requireBearer'], countRows, ['l', 'r', 'l', 'l']));
}
for (const reason of skipped) console.log(`\nnot measured: ${reason}`);
console.log(`\nload average after the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
