// npm run bench: req/s and latency of the token endpoint and requireBearer as ratios to a bare Express route.
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { mkdtempSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { failCli, parseCli, printHelp } from './parse-cli.js';
import { startServer } from './spawn-server.js';
import { measure } from './measure.js';
import { tokenRequest, fetchAccessToken, codeExchangeRequests, codeExchangeInit, fetchRefreshToken, refreshRequest } from './token-request.js';
import { DEFAULT_POSTGRES_URL, DEFAULT_REDIS_URL } from './bench-stores.js';
import { countRoundTrips } from './count-round-trips.js';
import { topFrames } from './top-frames.js';
import { markdownTable } from './format-table.js';
import { median } from './median.js';
import { databaseCpuMicros, redisServerPid } from './database-cpu.js';

const OPTIONS = {
  rounds: { type: 'string', default: '2' },
  warmup: { type: 'string', default: '2' }, // seconds, thrown away
  duration: { type: 'string', default: '5' }, // seconds, measured
  connections: { type: 'string', default: '10' },
  load: { type: 'string', default: 'autocannon' }, // the load generator: autocannon (in this process) or wrk
  'wrk-threads': { type: 'string', default: '2' },
  // Each ratio's reference measured again right before its scenario, in every round: twice the time, and a
  // reference round that ran slow (or fast) then skews one ratio instead of the whole round's.
  paired: { type: 'boolean', default: false },
  only: { type: 'string' }, // comma-separated scenario ids (ratios need their reference scenario too)
  profile: { type: 'boolean', default: false }, // one extra, untimed-for-the-table pass under --cpu-prof
};
const cli = parseCli(import.meta.url, OPTIONS, { deferHelp: true });
const ROUNDS = boundedInt('rounds', cli.rounds, 1, 9);
const WARMUP = boundedInt('warmup', cli.warmup, 1, 30);
const DURATION = boundedInt('duration', cli.duration, 1, 60);
const CONNECTIONS = boundedInt('connections', cli.connections, 1, 256);
if (cli.load !== 'autocannon' && cli.load !== 'wrk') failCli('--load must be autocannon or wrk');
const GENERATOR = cli.load;
const WRK_THREADS = boundedInt('wrk-threads', cli['wrk-threads'], 1, 64);

function boundedInt(name, text, min, max) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) failCli(`--${name} must be an integer in ${min}..${max}`);
  return value;
}

const OAUTH_SQLITE = ['--app', 'oauth', '--store', 'sqlite'];
const OAUTH_POSTGRES = ['--app', 'oauth', '--store', 'postgres', '--pg-url', DEFAULT_POSTGRES_URL];
const OAUTH_REDIS = ['--app', 'oauth', '--store', 'redis', '--redis-url', DEFAULT_REDIS_URL];
// Codes minted per code-exchange server: warm-up + measured seconds at up to 12,000 req/s, one code each.
const CODES = String((WARMUP + DURATION) * 12_000);
const clientCredentials = async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) });
const bearer = async (server) => ({ path: '/api/guarded', headers: { authorization: `Bearer ${await fetchAccessToken(server)}` } });

/** Each scenario runs in a fresh server child per round; `ratioTo` names the scenario of the same round it is divided by. */
const SCENARIOS = [
  { id: 'baseline', label: 'baseline: bare Express 5, GET /baseline → res.json', server: ['--app', 'baseline'], request: async () => ({ path: '/baseline' }) },
  {
    id: 'token-sqlite', label: 'POST /oauth2/token client_credentials, SQLite (temp file)', server: OAUTH_SQLITE,
    request: async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) }), ratioTo: 'baseline', target: 0.70,
  },
  {
    id: 'token-memory', label: 'POST /oauth2/token client_credentials, memory store', server: ['--app', 'oauth', '--store', 'memory'],
    request: async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) }), ratioTo: 'baseline',
  },
  {
    id: 'code-exchange-sqlite', label: 'POST /oauth2/token authorization_code (a fresh code per request), SQLite', server: [...OAUTH_SQLITE, '--codes', CODES],
    request: async (s) => ({ path: '/oauth2/token', ...codeExchangeRequests(s) }), ratioTo: 'baseline', target: 0.60,
  },
  {
    id: 'refresh-sqlite', label: 'POST /oauth2/token refresh_token (one refresh token reused), SQLite', server: [...OAUTH_SQLITE, '--codes', '1'],
    request: async (s) => ({ path: '/oauth2/token', ...refreshRequest(s, await fetchRefreshToken(s)) }), ratioTo: 'baseline', target: 0.60,
  },
  { id: 'open', label: 'GET /api/open, unguarded, same app as below', server: OAUTH_SQLITE, request: async () => ({ path: '/api/open' }), ratioTo: 'baseline' },
  { id: 'guarded', label: 'GET /api/guarded, requireBearer, opaque token, SQLite', server: OAUTH_SQLITE, request: bearer, ratioTo: 'open', target: 0.95 },
  {
    // requireBearer puts the request in V8's dictionary mode, which alone makes the rest of it cheaper: the unguarded
    // route given the same, and the guarded route against it, show what the check itself costs.
    id: 'open-dictionary', label: 'GET /api/open, unguarded, request and response in dictionary mode as requireBearer leaves them', server: OAUTH_SQLITE,
    request: async () => ({ path: '/api/open-dictionary' }), ratioTo: 'open',
  },
  {
    id: 'guarded-check', label: 'GET /api/guarded as above, against the unguarded route in dictionary mode: the check alone', server: OAUTH_SQLITE,
    request: bearer, ratioTo: 'open-dictionary',
  },
  {
    id: 'open-router-first', label: "GET /api/open, unguarded, the router mounted before it (the README's order)",
    server: [...OAUTH_SQLITE, '--router-first'], request: async () => ({ path: '/api/open' }), ratioTo: 'baseline',
  },
  {
    id: 'guarded-router-first', label: "GET /api/guarded, requireBearer, opaque token, the router mounted before it",
    server: [...OAUTH_SQLITE, '--router-first'], request: bearer, ratioTo: 'open-router-first', target: 0.95,
  },
  {
    id: 'guarded-jwt', label: 'GET /api/guarded, requireBearer, JWT access token, SQLite', server: [...OAUTH_SQLITE, '--token-format', 'jwt'],
    request: async (s) => {
      const request = await bearer(s);
      if (request.headers.authorization.split('.').length !== 3) throw new Error('accessTokenFormat: "jwt" was accepted but the token is not a JWT');
      return request;
    },
    ratioTo: 'open', target: 0.95, optional: true,
  },
  {
    // The unguarded route of the JWT app sent the same header, which it ignores: what the longer request costs
    // (its bytes through wrk, the loopback and the parser), apart from what the check costs (guarded-jwt against it).
    id: 'open-jwt-header', label: 'GET /api/open, unguarded, sent the JWT header of the row above', server: [...OAUTH_SQLITE, '--token-format', 'jwt'],
    request: async (s) => ({ ...(await bearer(s)), path: '/api/open' }), ratioTo: 'open', optional: true,
  },
  // PostgreSQL and Redis (OAUTH_BENCH_POSTGRES_URL, OAUTH_BENCH_REDIS_URL): a schema / key prefix per server child,
  // dropped when it stops; skipped, with the reason printed, when the service cannot be reached.
  { id: 'token-postgres', label: 'POST /oauth2/token client_credentials, PostgreSQL', server: OAUTH_POSTGRES, request: clientCredentials, ratioTo: 'baseline', target: 0.50, optional: true },
  {
    id: 'code-exchange-postgres', label: 'POST /oauth2/token authorization_code (a fresh code per request), PostgreSQL', server: [...OAUTH_POSTGRES, '--codes', CODES],
    request: async (s) => ({ path: '/oauth2/token', ...codeExchangeRequests(s) }), ratioTo: 'baseline', target: 0.50, optional: true,
  },
  {
    id: 'refresh-postgres', label: 'POST /oauth2/token refresh_token (one refresh token reused), PostgreSQL', server: [...OAUTH_POSTGRES, '--codes', '1'],
    request: async (s) => ({ path: '/oauth2/token', ...refreshRequest(s, await fetchRefreshToken(s)) }), ratioTo: 'baseline', target: 0.50, optional: true,
  },
  { id: 'open-postgres', label: 'GET /api/open, unguarded, same app as below (PostgreSQL store)', server: OAUTH_POSTGRES, request: async () => ({ path: '/api/open' }), ratioTo: 'baseline', optional: true },
  { id: 'guarded-postgres', label: 'GET /api/guarded, requireBearer, opaque token, PostgreSQL', server: OAUTH_POSTGRES, request: bearer, ratioTo: 'open-postgres', target: 0.90, optional: true },
  { id: 'token-redis', label: 'POST /oauth2/token client_credentials, Redis', server: OAUTH_REDIS, request: clientCredentials, ratioTo: 'baseline', target: 0.50, optional: true },
  {
    id: 'code-exchange-redis', label: 'POST /oauth2/token authorization_code (a fresh code per request), Redis', server: [...OAUTH_REDIS, '--codes', CODES],
    request: async (s) => ({ path: '/oauth2/token', ...codeExchangeRequests(s) }), ratioTo: 'baseline', target: 0.50, optional: true,
  },
  {
    id: 'refresh-redis', label: 'POST /oauth2/token refresh_token (one refresh token reused), Redis', server: [...OAUTH_REDIS, '--codes', '1'],
    request: async (s) => ({ path: '/oauth2/token', ...refreshRequest(s, await fetchRefreshToken(s)) }), ratioTo: 'baseline', target: 0.50, optional: true,
  },
  { id: 'open-redis', label: 'GET /api/open, unguarded, same app as below (Redis store)', server: OAUTH_REDIS, request: async () => ({ path: '/api/open' }), ratioTo: 'baseline', optional: true },
  { id: 'guarded-redis', label: 'GET /api/guarded, requireBearer, opaque token, Redis', server: OAUTH_REDIS, request: bearer, ratioTo: 'open-redis', target: 0.90, optional: true },
  // The reference servers (bench/anchors.js), same request shape; issue 10 quoted them at 0.49, 0.35 and 0.27.
  {
    id: 'token-oauth2-server', label: '@node-oauth/oauth2-server 5 token endpoint, client_credentials, in-memory model', server: ['--app', 'oauth2-server'],
    request: async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) }), ratioTo: 'baseline',
  },
  {
    id: 'token-oidc-provider', label: 'oidc-provider 9 in Express, client_credentials, opaque token, in-memory adapter', server: ['--app', 'oidc-provider'],
    request: async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) }), ratioTo: 'baseline',
  },
  {
    id: 'token-oidc-provider-jwt', label: 'oidc-provider 9 in Express, client_credentials, JWT access token (resource indicator)', server: ['--app', 'oidc-provider', '--token-format', 'jwt'],
    request: async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) }), ratioTo: 'baseline',
  },
  {
    id: 'example-envelopes', label: 'example app: GET /api/v1/envelopes, opaque token, SQLite', server: ['--app', 'example'],
    request: async (s) => ({ path: '/api/v1/envelopes', headers: { authorization: `Bearer ${await fetchAccessToken(s)}` } }), ratioTo: 'baseline', target: 0.80,
  },
];
if (cli.help) printHelp(import.meta.url, OPTIONS, `Scenarios (--only, comma-separated):\n${SCENARIOS.map((s) => `  ${s.id}`).join('\n')}`);

const only = cli.only ? new Set(cli.only.split(',')) : null;
const unknown = only ? [...only].filter((id) => !SCENARIOS.some((s) => s.id === id)) : [];
if (unknown.length > 0) failCli(`--only: no scenario ${unknown.join(', ')}`);
const scenarios = SCENARIOS.filter((s) => !only || only.has(s.id));

/** The database engine a scenario's server stores in ('postgres' | 'redis'), or undefined (SQLite, memory, none). */
function databaseOf(scenario) {
  const engine = scenario.server[scenario.server.indexOf('--store') + 1];
  return engine === 'postgres' || engine === 'redis' ? engine : undefined;
}
/** The Redis server's own process, asked once: the cluster of the test suite may run beside it. */
let redisPid;

async function runScenario(scenario, nodeArgs = []) {
  const engine = databaseOf(scenario);
  if (engine === 'redis' && redisPid === undefined) redisPid = await redisServerPid(DEFAULT_REDIS_URL);
  const databaseCpu = engine === undefined ? undefined : () => databaseCpuMicros(engine, engine === 'redis' ? redisPid : undefined);
  const server = await startServer(scenario.server, { nodeArgs });
  try {
    const { path, ...init } = await scenario.request(server);
    return await measure({ url: `${server.url}${path}`, ...init, connections: CONNECTIONS, warmupSeconds: WARMUP, durationSeconds: DURATION, generator: GENERATOR, wrkThreads: WRK_THREADS, serverCpuUsage: server.cpuUsage, databaseCpuMicros: databaseCpu });
  } finally {
    await server.stop();
  }
}

console.log(`express-oauth-router bench: Node ${process.version}, ${availableParallelism()} cores, ${new Date().toISOString()}`);
console.log(`load average before the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other work on these cores lowers req/s; server CPU µs/req much less)`);
console.log(`${ROUNDS} rounds × (${WARMUP} s warm-up + ${DURATION} s measured) per scenario${cli.paired ? ', each ratio\'s reference measured again just before it' : ''}, ${CONNECTIONS} connections, ${GENERATOR === 'wrk' ? `wrk (${WRK_THREADS} threads) in a process of its own` : 'autocannon in this process'}, server in a child\n`);

const results = new Map(scenarios.map((s) => [s.id, []]));
/** With --paired: scenario id → its reference's measurement made just before it, one per round. */
const pairedReferences = new Map(scenarios.map((s) => [s.id, []]));
const byId = new Map(SCENARIOS.map((s) => [s.id, s]));
const skipped = new Map();
const report = (round, id, result) => console.log(`round ${round}  ${id.padEnd(20)} ${result.rps.toFixed(0).padStart(7)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms  server ${result.cpuUs.toFixed(0)} µs CPU/req${result.dbCpuUs === null ? '' : `  database ${result.dbCpuUs.toFixed(0)} µs`}  (load avg ${loadavg()[0].toFixed(2)})`);
for (let round = 1; round <= ROUNDS; round += 1) {
  for (const scenario of scenarios) {
    if (skipped.has(scenario.id)) continue;
    try {
      if (cli.paired && scenario.ratioTo) {
        const reference = await runScenario(byId.get(scenario.ratioTo));
        pairedReferences.get(scenario.id).push(reference);
        report(round, `${scenario.ratioTo} (for ${scenario.id})`, reference);
      }
      const result = await runScenario(scenario);
      results.get(scenario.id).push(result);
      report(round, scenario.id, result);
    } catch (error) {
      if (!scenario.optional) throw error;
      // A reference measured for this round without its scenario would pair with the wrong round.
      if (pairedReferences.get(scenario.id).length > results.get(scenario.id).length) pairedReferences.get(scenario.id).pop();
      skipped.set(scenario.id, error.message);
      console.log(`round ${round}  ${scenario.id.padEnd(20)} skipped: ${error.message}`);
    }
  }
}

const rows = [];
for (const scenario of scenarios) {
  const runs = results.get(scenario.id);
  if (runs.length === 0) continue;
  const reference = !scenario.ratioTo ? null : cli.paired ? pairedReferences.get(scenario.id) : results.get(scenario.ratioTo);
  // Per-round ratio (numerator and denominator measured minutes apart at most), then the median of those.
  const ratio = reference?.length === runs.length ? median(runs.map((run, i) => run.rps / reference[i].rps)) : null;
  // The same ratio from the server's CPU time per request: what req/s would give on an otherwise idle core.
  const cpuRatio = reference?.length === runs.length ? median(runs.map((run, i) => reference[i].cpuUs / run.cpuUs)) : null;
  const verdict = scenario.target === undefined || ratio === null ? '' : ratio >= scenario.target ? 'meets' : 'misses';
  rows.push([
    scenario.label,
    median(runs.map((r) => r.rps)).toFixed(0),
    runs.map((r) => r.rps.toFixed(0)).join(' / '),
    // A median of an even number of rounds is a mean of two: rounded, so that 0.5549999999999999 prints as 0.55.
    String(Number(median(runs.map((r) => r.p50)).toFixed(2))),
    String(Number(median(runs.map((r) => r.p99)).toFixed(2))),
    median(runs.map((r) => r.cpuUs)).toFixed(0),
    runs.every((r) => r.dbCpuUs !== null) ? median(runs.map((r) => r.dbCpuUs)).toFixed(0) : '',
    ratio === null ? '' : `${ratio.toFixed(2)} of ${scenario.ratioTo}`,
    cpuRatio === null ? '' : cpuRatio.toFixed(2),
    scenario.target === undefined ? '' : `≥ ${scenario.target.toFixed(2)} ${verdict}`,
  ]);
}
console.log(`\n${markdownTable(
  ['scenario', 'req/s (median)', 'req/s per round', 'p50 ms', 'p99 ms', 'server µs CPU/req', 'database µs CPU/req', 'ratio (req/s)', 'ratio (CPU/req)', 'DESIGN §3a target (req/s ratio)'],
  rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'l'],
)}`);
for (const [id, reason] of skipped) console.log(`\n${id} not measured: ${reason}`);
console.log(`\nload average after the run: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`ratio (req/s): median over rounds of scenario req/s ÷ reference req/s ${cli.paired ? 'measured just before it (--paired)' : 'of the same round'}; ratio (CPU/req): reference CPU/req ÷ scenario CPU/req (the server's alone); database µs CPU/req: every PostgreSQL process, or the Redis server's, per request (read from /proc, Linux only).`);
console.log('\nFigures issue 10 quoted for the references (measured above as token-oauth2-server, token-oidc-provider[-jwt]): @node-oauth/oauth2-server 0.49, oidc-provider in Express 0.35 (0.27 with JWT access tokens).');

// Store round trips per request, from a separate untimed server whose store counts its calls.
const counted = [
  ['token-sqlite', OAUTH_SQLITE, async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) })],
  ['guarded', OAUTH_SQLITE, bearer],
  ['code-exchange-sqlite', [...OAUTH_SQLITE, '--codes', '100'], async (s) => ({ path: '/oauth2/token', init: (i) => codeExchangeInit(s, i + 1) })],
  ['refresh-sqlite', [...OAUTH_SQLITE, '--codes', '1'], async (s) => ({ path: '/oauth2/token', ...refreshRequest(s, await fetchRefreshToken(s)) })],
  ...(results.get('guarded-jwt')?.length ? [['guarded-jwt', [...OAUTH_SQLITE, '--token-format', 'jwt'], bearer]] : []),
  // The networked stores' token rows, when this run reached their engine: what their integration copies spare.
  ...[['postgres', OAUTH_POSTGRES], ['redis', OAUTH_REDIS]].flatMap(([engine, server]) => [
    [`token-${engine}`, server, async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) })],
    [`code-exchange-${engine}`, [...server, '--codes', '100'], async (s) => ({ path: '/oauth2/token', init: (i) => codeExchangeInit(s, i + 1) })],
    [`refresh-${engine}`, [...server, '--codes', '1'], async (s) => ({ path: '/oauth2/token', ...refreshRequest(s, await fetchRefreshToken(s)) })],
  ]).filter(([id]) => results.get(id)?.length),
].filter(([id]) => !only || only.has(id));
if (counted.length > 0) console.log('\nstore calls per request (untimed, counting store):');
for (const [id, serverArgs, makeRequest] of counted) {
  const server = await startServer([...serverArgs, '--count']);
  try {
    const { path, init: initFor, ...init } = await makeRequest(server);
    const calls = await countRoundTrips(server, path, initFor ?? init);
    const total = Object.values(calls).reduce((a, b) => a + b, 0);
    console.log(`  ${id.padEnd(22)} ${total} — ${Object.entries(calls).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
  } finally {
    await server.stop();
  }
}

if (cli.profile) {
  // token-sqlite and guarded always (the references of the profile section); the others when this run measured them.
  const profiled = ['token-sqlite', 'guarded', ...['token-memory', 'code-exchange-sqlite', 'refresh-sqlite', 'guarded-jwt', 'example-envelopes', 'token-postgres', 'token-redis', 'code-exchange-postgres', 'refresh-postgres', 'code-exchange-redis', 'refresh-redis', 'guarded-postgres', 'guarded-redis'].filter((id) => results.get(id)?.length)];
  for (const id of profiled) {
    const scenario = SCENARIOS.find((s) => s.id === id);
    const dir = mkdtempSync(join(tmpdir(), `oauth-bench-prof-${id}-`));
    const result = await runScenario(scenario, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
    const { frames, places, idleShare } = topFrames(join(dir, file), 12);
    console.log(`\nprofile of ${id} (${result.rps.toFixed(0)} req/s under the profiler; server idle ${(idleShare * 100).toFixed(0)} % of samples): ${join(dir, file)}`);
    console.log('  top self time (share of busy samples):');
    for (const { name, share } of frames) console.log(`  ${(share * 100).toFixed(1).padStart(5)} %  ${name}`);
    console.log('  by file / package:');
    for (const { name, share } of places) console.log(`  ${(share * 100).toFixed(1).padStart(5)} %  ${name}`);
  }
}
