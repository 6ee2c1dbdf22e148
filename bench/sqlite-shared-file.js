// Two processes on one SQLite file (node:cluster, pm2 -i 2, two instances on one volume) against two on a file each:
// what waiting for each other's write lock costs the token endpoint. Per round, both layouts run, in alternating
// order: two bench servers (--app oauth --store sqlite), each driven by its own wrk at the same time with
// client_credentials requests. The layout of a file each is the baseline measured in the same run.
// --mix bearer: the first server still issues tokens under its wrk, the second answers GET /api/guarded
// (requireBearer, --tokens opaque tokens in turn, as many clients would send) under its own, and the table is the
// second's: whether the first's commits empty its bearer cache (they did before schema 9's change counters: every
// commit moved data_version, and each token was then looked up again).
//
// --count (with --mix bearer): the guarded server counts its store calls (bench/counting-store.js), and the table
// adds the token lookups per guarded request, i.e. the bearer cache's misses; its CPU figures are then not timings.
//
//   npm run build && node bench/sqlite-shared-file.js [--mix token|bearer] [--tokens 1000] [--count] [--seconds 10]
//     [--rounds 3] [--connections 16]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './spawn-server.js';
import { tokenRequest, fetchAccessToken } from './token-request.js';
import { runWrk } from './wrk.js';
import { median } from './median.js';
import { markdownTable } from './format-table.js';
import { parseCli } from './parse-cli.js';

const args = parseCli(import.meta.url, {
  seconds: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '3' },
  connections: { type: 'string', default: '16' },
  mix: { type: 'string', default: 'token' },
  count: { type: 'boolean', default: false },
  tokens: { type: 'string', default: '1000' },
});
if (!['token', 'bearer'].includes(args.mix)) throw new Error('--mix must be token or bearer');
const bearerMix = args.mix === 'bearer';
const seconds = Number(args.seconds);
const rounds = Number(args.rounds);
const connections = Number(args.connections);

/** Runs both servers under load at once; their files are `files[0]` and `files[1]` (the same path when shared). */
async function measure(files) {
  const servers = [];
  try {
    // One after the other, so that a server that fails to start leaves the other in `servers`, to be stopped.
    for (const file of files) {
      const counted = args.count && bearerMix && servers.length === 1 ? ['--count'] : [];
      servers.push(await startServer(['--app', 'oauth', '--store', 'sqlite', '--sqlite-file', file, ...counted]));
    }
    const storeCalls = async () => (args.count && bearerMix ? (await fetch(`${servers[1].url}/__bench/store-calls`)).json() : {});
    const loads = await Promise.all(servers.map(async (server, i) => (bearerMix && i === 1
      ? { url: `${server.url}/api/guarded`, bearers: await fetchAccessTokens(server, Number(args.tokens)) }
      : { url: `${server.url}/oauth2/token`, ...tokenRequest(server.clientId, server.clientSecret) })));
    await storeCalls(); // reset
    const cpuBefore = await servers[1].cpuUsage();
    const all = await Promise.all(servers.map((_server, i) => runWrk({ ...loads[i], connections, threads: 1, seconds })));
    const cpuAfter = await servers[1].cpuUsage();
    const lookups = (await storeCalls())['tokens.findAccessToken'] ?? 0;
    // With --mix bearer the row is the guarded server's alone; the token server's rate is reported beside it.
    const runs = bearerMix ? [all[1]] : all;
    const failed = all.reduce((sum, run) => sum + run.errors + run.non2xx, 0);
    const cpu = cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system;
    return {
      cpuPerRequest: cpu / all[1].requests,
      lookupsPerRequest: lookups / all[1].requests,
      tokenRps: all[0].requests / all[0].seconds,
      rps: runs.reduce((sum, run) => sum + run.requests / run.seconds, 0),
      p50: Math.max(...runs.map((run) => run.p50)),
      p99: Math.max(...runs.map((run) => run.p99)),
      max: Math.max(...runs.map((run) => run.max)),
      failed,
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/** `count` access tokens of the server's integration, fetched a few at a time. */
async function fetchAccessTokens(server, count) {
  const tokens = [];
  while (tokens.length < count) {
    const batch = Math.min(20, count - tokens.length);
    tokens.push(...await Promise.all(Array.from({ length: batch }, () => fetchAccessToken(server))));
  }
  return tokens;
}

const results = { separate: [], shared: [] };
for (let round = 0; round < rounds; round += 1) {
  const order = round % 2 === 0 ? ['separate', 'shared'] : ['shared', 'separate'];
  for (const layout of order) {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-bench-shared-'));
    try {
      const files = layout === 'shared' ? [join(dir, 'one.sqlite'), join(dir, 'one.sqlite')] : [join(dir, 'a.sqlite'), join(dir, 'b.sqlite')];
      results[layout].push(await measure(files));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const rows = ['separate', 'shared'].map((layout) => {
  const runs = results[layout];
  const ratios = runs.map((run, i) => run.rps / results.separate[i].rps);
  return [
    layout === 'separate' ? 'two processes, a file each (baseline)' : 'two processes, one file',
    String(Math.round(median(runs.map((run) => run.rps)))),
    runs.map((run) => Math.round(run.rps)).join(' / '),
    median(runs.map((run) => run.p50)).toFixed(2),
    median(runs.map((run) => run.p99)).toFixed(2),
    String(Math.max(...runs.map((run) => run.max))),
    String(runs.reduce((sum, run) => sum + run.failed, 0)),
    median(ratios).toFixed(3),
    ...(bearerMix ? [median(runs.map((run) => run.cpuPerRequest)).toFixed(1), String(Math.round(median(runs.map((run) => run.tokenRps))))] : []),
    ...(args.count && bearerMix ? [runs.map((run) => run.lookupsPerRequest.toFixed(3)).join(' / ')] : []),
  ];
});
const who = bearerMix ? 'the guarded server' : 'both servers';
process.stdout.write(`${markdownTable(
  ['layout', `req/s (median, ${who})`, 'req/s per round', `p50 ms (${bearerMix ? who : 'worse server'})`,
    `p99 ms (${bearerMix ? who : 'worse server'})`, 'max ms', 'non-2xx + socket errors', 'ratio',
    ...(bearerMix ? ['µs CPU/req (guarded server)', 'token req/s (the other server)'] : []),
    ...(args.count && bearerMix ? ['token lookups per guarded request, per round'] : [])],
  rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', ...(bearerMix ? ['r', 'r'] : []), ...(args.count && bearerMix ? ['r'] : [])],
)}\n`);
