// Instructions per request of each scenario, counted by callgrind: a figure that repeats on a VM whose req/s do not.
// node bench/instructions.js [--requests 3000] [--warmup 5000] [--only baseline,token-sqlite,…,token-postgres,token-redis] [--keep DIR]
// With --keep, each scenario's dump is kept as DIR/<id>.callgrind, with V8's map of its JIT code (node --perf-basic-prof)
// as DIR/<id>.perf-map and the request count as DIR/<id>.json: `node bench/callgrind-diff.js DIR/a DIR/b` names and
// compares the functions of two of them.
//
// Each scenario's server child (bench/server.js, as `npm run bench` starts it, store sweeps off) runs under
// `valgrind --tool=callgrind`, with counting off while it starts and while --warmup requests warm its JIT up.
// Counting is then switched on and zeroed (`callgrind_control`), --requests requests are sent one after the
// other on one keep-alive connection (so every save is a batch of one, whatever the machine's speed), and the
// counts are dumped. What is counted: the server process's user-space instructions, its threads included.
// What is not: the kernel (syscalls, the disk's sync, the loopback's TCP), and waiting. So it prices the
// JavaScript and SQLite work of a request exactly, and says nothing of what the disk costs; read it beside
// `npm run bench`, not instead of it. The same settings give the same count to 0.1 % run after run on an idle
// machine; two counts run side by side (or beside other load) read the same build up to 4 % apart, since V8
// sizes its heap and schedules collections partly by wall-clock time, so count one scenario at a time and
// compare medians of several runs for a change of a few k. On a heavily loaded machine (load average past the
// cores) the code exchange read 8–9 % high, by two mark-compacts more in its window (BENCHMARKS.md, forty-third
// pass: a bisection that ended on a commit changing tests only): count on a quiet machine. Other --warmup or --requests move the count by up
// to 5–10 % (the JIT's tiering and where the counted window meets a garbage collection), so compare only
// counts made with the same settings. A run of the default set takes about fifteen minutes.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failCli, parseCli } from './parse-cli.js';
import { startServer } from './spawn-server.js';
import { tokenRequest, fetchAccessToken, codeExchangeInit, fetchRefreshToken, refreshRequest } from './token-request.js';
import { DEFAULT_POSTGRES_URL, DEFAULT_REDIS_URL } from './bench-stores.js';

const cli = parseCli(import.meta.url, {
  requests: { type: 'string', default: '3000' },
  warmup: { type: 'string', default: '5000' },
  only: { type: 'string' },
  keep: { type: 'string' }, // a directory to keep each scenario's callgrind dump and JIT map in (bench/callgrind-diff.js reads them)
});
const REQUESTS = Number(cli.requests);
const WARMUP = Number(cli.warmup);
if (!Number.isInteger(REQUESTS) || REQUESTS < 1 || !Number.isInteger(WARMUP) || WARMUP < 0) {
  failCli('--requests must be a positive integer and --warmup an integer of 0 or more');
}
const OAUTH = ['--app', 'oauth', '--store', 'sqlite', '--sweep-seconds', '0'];
// The network stores' rows count this process's side of each round trip (the driver, the batching, the
// decoding); the database's own work is in another process and is not counted.
const POSTGRES = ['--app', 'oauth', '--store', 'postgres', '--pg-url', DEFAULT_POSTGRES_URL, '--sweep-seconds', '0'];
const REDIS = ['--app', 'oauth', '--store', 'redis', '--redis-url', DEFAULT_REDIS_URL, '--sweep-seconds', '0'];
const cc = async (s) => ({ path: '/oauth2/token', ...tokenRequest(s.clientId, s.clientSecret) });
/** The code-exchange and refresh rows of a store's server argv: a fresh code per request, one refresh token reused. */
const codeExchange = (server) => ({
  server: [...server, '--codes', String(WARMUP + REQUESTS + 2)], ratioTo: 'baseline',
  request: async (s) => (i) => ({ path: '/oauth2/token', ...codeExchangeInit(s, i + 1) }),
});
const refresh = (server) => ({
  server: [...server, '--codes', '1'], ratioTo: 'baseline',
  request: async (s) => ({ path: '/oauth2/token', ...refreshRequest(s, await fetchRefreshToken(s)) }),
});
const bearer = async (s) => ({ path: '/api/guarded', headers: { authorization: `Bearer ${await fetchAccessToken(s)}` } });

/** id → server argv, the request (a function of the request's number for the code exchange), the reference id. */
const SCENARIOS = {
  baseline: { server: ['--app', 'baseline'], request: async () => ({ path: '/baseline' }) },
  'token-memory': { server: ['--app', 'oauth', '--store', 'memory', '--sweep-seconds', '0'], request: cc, ratioTo: 'baseline' },
  'token-sqlite': { server: OAUTH, request: cc, ratioTo: 'baseline' },
  'code-exchange-sqlite': codeExchange(OAUTH),
  'refresh-sqlite': refresh(OAUTH),
  open: { server: OAUTH, request: async () => ({ path: '/api/open' }), ratioTo: 'baseline' },
  guarded: { server: OAUTH, request: bearer, ratioTo: 'open' },
  'open-dictionary': { server: OAUTH, request: async () => ({ path: '/api/open-dictionary' }), ratioTo: 'open' },
  'guarded-check': { server: OAUTH, request: bearer, ratioTo: 'open-dictionary' },
  'guarded-jwt': { server: [...OAUTH, '--token-format', 'jwt'], request: bearer, ratioTo: 'open' },
  // The unguarded route sent the same JWT header, which it ignores: what the longer request costs (its parse),
  // apart from what the check costs (guarded-jwt against this row).
  'open-jwt-header': { server: [...OAUTH, '--token-format', 'jwt'], request: async (s) => ({ ...(await bearer(s)), path: '/api/open' }), ratioTo: 'open' },
  'open-router-first': { server: [...OAUTH, '--router-first'], request: async () => ({ path: '/api/open' }), ratioTo: 'baseline' },
  'guarded-router-first': { server: [...OAUTH, '--router-first'], request: bearer, ratioTo: 'open-router-first' },
  'token-postgres': { server: POSTGRES, request: cc, ratioTo: 'baseline' },
  'code-exchange-postgres': codeExchange(POSTGRES),
  'refresh-postgres': refresh(POSTGRES),
  'token-redis': { server: REDIS, request: cc, ratioTo: 'baseline' },
  'code-exchange-redis': codeExchange(REDIS),
  'refresh-redis': refresh(REDIS),
  'example-envelopes': {
    server: ['--app', 'example'], ratioTo: 'baseline',
    request: async (s) => ({ path: '/api/v1/envelopes', headers: { authorization: `Bearer ${await fetchAccessToken(s)}` } }),
  },
};
for (const tool of ['valgrind', 'callgrind_control']) {
  try {
    execFileSync(tool, ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`bench/instructions.js needs ${tool} (Debian: apt-get install valgrind)`);
  }
}
// The PostgreSQL and Redis rows need those servers (bench-stores.js's URLs): counted when named in --only.
const ids = cli.only ? cli.only.split(',') : Object.keys(SCENARIOS).filter((id) => !/-(postgres|redis)$/.test(id));
for (const id of ids) if (!SCENARIOS[id]) throw new Error(`unknown scenario ${id}; known: ${Object.keys(SCENARIOS).join(', ')}`);

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One request on the keep-alive connection; rejects unless 2xx. */
function send(url, { method = 'GET', headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers: { ...headers, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) }, agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode >= 200 && res.statusCode < 300 ? resolve() : reject(new Error(`${url} answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const control = (pid, ...args) => execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });

async function count(id) {
  const scenario = SCENARIOS[id];
  const dir = mkdtempSync(join(tmpdir(), 'oauth-bench-callgrind-'));
  // Counting off until the warm-up is over; -q keeps valgrind's banner out of the report.
  const server = await startServer(scenario.server, {
    wrapper: ['valgrind', '-q', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'cg.out')}`],
    // With --keep, V8 writes /tmp/perf-<pid>.map (JIT code addresses → function names; valgrind runs node in its
    // own process, so the pid is the server's): the dump's JIT frames are otherwise bare addresses.
    // It also writes a V8 log, kept out of the working directory.
    nodeArgs: ['--single-threaded', ...(cli.keep ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`] : [])],
    readyTimeoutMs: 300_000,
  });
  try {
    const made = await scenario.request(server);
    const requestOf = typeof made === 'function' ? made : () => made;
    let n = 0;
    const run = async (times) => {
      for (let i = 0; i < times; i += 1, n += 1) {
        const { path, ...init } = requestOf(n);
        await send(`${server.url}${path}`, init);
      }
    };
    await run(WARMUP);
    control(server.pid, '-i', 'on');
    control(server.pid, '-z');
    await run(REQUESTS);
    control(server.pid, '-d');
    const dump = readFileSync(join(dir, 'cg.out.1'), 'utf8');
    if (cli.keep) {
      mkdirSync(cli.keep, { recursive: true });
      copyFileSync(join(dir, 'cg.out.1'), join(cli.keep, `${id}.callgrind`));
      writeFileSync(join(cli.keep, `${id}.json`), `${JSON.stringify({ requests: REQUESTS, warmup: WARMUP })}\n`);
    }
    const summary = /^summary: (\d+)$/m.exec(dump);
    if (!summary) throw new Error(`no summary in the callgrind dump of ${id}`);
    return Number(summary[1]) / REQUESTS;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    // Read once the server has exited: V8 writes the map through a buffer it flushes at exit.
    const perfMap = `/tmp/perf-${server.pid}.map`;
    if (cli.keep) copyFileSync(perfMap, join(cli.keep, `${id}.perf-map`));
    rmSync(perfMap, { force: true });
  }
}

console.log(`instructions per request (callgrind, user space of the server process), ${WARMUP} requests uncounted, then ${REQUESTS} counted, one connection\n`);
const perRequest = {};
for (const id of ids) {
  perRequest[id] = await count(id);
  console.log(`${id.padEnd(22)} ${(perRequest[id] / 1000).toFixed(1).padStart(8)} k instructions per request`);
}
console.log('\n| scenario | k instructions per request | ratio (reference ÷ scenario) |');
console.log('|---|---:|---|');
for (const id of ids) {
  const ref = SCENARIOS[id].ratioTo;
  const ratio = ref && perRequest[ref] ? `${(perRequest[ref] / perRequest[id]).toFixed(2)} of ${ref}` : '';
  console.log(`| ${id} | ${(perRequest[id] / 1000).toFixed(1)} | ${ratio} |`);
}
agent.destroy();
