// Two processes on one SQLite file (node:cluster, pm2 -i 2, two instances on one volume) against two on a file each:
// what waiting for each other's write lock costs the token endpoint. Per round, both layouts run, in alternating
// order: two bench servers (--app oauth --store sqlite), each driven by its own wrk at the same time with
// client_credentials requests. The layout of a file each is the baseline measured in the same run.
//
//   npm run build && node bench/sqlite-shared-file.js [--seconds 10] [--rounds 3] [--connections 16]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './spawn-server.js';
import { tokenRequest } from './token-request.js';
import { runWrk } from './wrk.js';
import { median } from './median.js';
import { markdownTable } from './format-table.js';
import { parseCli } from './parse-cli.js';

const args = parseCli(import.meta.url, {
  seconds: { type: 'string', default: '10' },
  rounds: { type: 'string', default: '3' },
  connections: { type: 'string', default: '16' },
});
const seconds = Number(args.seconds);
const rounds = Number(args.rounds);
const connections = Number(args.connections);

/** Runs both servers under load at once; their files are `files[0]` and `files[1]` (the same path when shared). */
async function measure(files) {
  const servers = [];
  try {
    // One after the other, so that a server that fails to start leaves the other in `servers`, to be stopped.
    for (const file of files) servers.push(await startServer(['--app', 'oauth', '--store', 'sqlite', '--sqlite-file', file]));
    const runs = await Promise.all(servers.map((server) => runWrk({
      url: `${server.url}/oauth2/token`, ...tokenRequest(server.clientId, server.clientSecret), connections, threads: 1, seconds,
    })));
    const failed = runs.reduce((sum, run) => sum + run.errors + run.non2xx, 0);
    return {
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
  ];
});
process.stdout.write(`${markdownTable(
  ['layout', 'req/s (median, both servers)', 'req/s per round', 'p50 ms (worse server)', 'p99 ms (worse server)', 'max ms', 'non-2xx + socket errors', 'ratio'],
  rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
)}\n`);
