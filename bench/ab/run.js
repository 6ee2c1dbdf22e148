// Same-run A/B of two builds of the package (e.g. HEAD in a scratch copy vs the working tree): rounds alternate.
// node bench/ab/run.js --rounds 4 --roots "/tmp/before@baseline+memory+sqlite:normal,.@baseline+memory+sqlite:full"
// Each root is a directory holding package.json, dist/ (built) and node_modules/; apps: baseline, memory,
// sqlite[:full|:normal|:writer-thread] (writer-thread: bench/ab/writer-thread.js), sqlite-code[:full|:normal] (code
// exchanges, a fresh code per request), postgres (OAUTH_BENCH_POSTGRES_URL). A root without baseline uses --ref's. Reports req/s and server CPU µs/request.
// --load wrk [--wrk-threads N] drives the load with wrk instead of autocannon (bench/wrk.js).
// --prof writes a .cpuprofile per child into bench/ab/prof-*/ (read it with bench/top-frames.js).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measure } from '../measure.js';
import { codeExchangeRequests, tokenRequest } from '../token-request.js';
const HERE = fileURLToPath(new URL('.', import.meta.url));
const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, roots: { type: 'string' }, apps: { type: 'string', default: 'baseline,memory,sqlite' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '10' }, load: { type: 'string', default: 'autocannon' }, 'wrk-threads': { type: 'string', default: '2' }, prof: { type: 'boolean', default: false }, ref: { type: 'string', default: '.' } } });
const roots = values.roots.split(',').map((r) => resolve(r.split('@')[0]));
const appsOf = Object.fromEntries(values.roots.split(',').map((r) => [resolve(r.split('@')[0]), r.includes('@') ? r.split('@')[1].split('+') : values.apps.split(',')]));
function start(root, app) {
  const [kind, sync] = app.split(':');
  const nodeArgs = values.prof ? ['--cpu-prof', `--cpu-prof-dir=${HERE}prof-${root.replace(/\W/g, '_')}-${app.replace(/\W/g, '_')}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, SERVER, root, kind, ...(sync ? [sync] : [])], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  return new Promise((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = JSON.parse(line);
      resolve({ ...m, url: `http://127.0.0.1:${m.port}`, cpuUsage: () => new Promise((r) => { child.once('message', (x) => r(x.cpuUsage)); child.send('cpu-usage'); }), stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) });
    });
  });
}
const res = {};
for (let round = 0; round < Number(values.rounds); round++) {
  for (const root of roots) for (const app of appsOf[root]) {
    const s = await start(root, app);
    const req = app === 'baseline' ? { url: `${s.url}/baseline` }
      : app.startsWith('sqlite-code') ? { url: `${s.url}/oauth2/token`, ...codeExchangeRequests(s) }
        : { url: `${s.url}/oauth2/token`, ...tokenRequest(s.clientId, s.clientSecret) };
    const r = await measure({ ...req, connections: Number(values.connections), generator: values.load, wrkThreads: Number(values['wrk-threads']), warmupSeconds: 2, durationSeconds: Number(values.duration), serverCpuUsage: s.cpuUsage });
    await s.stop();
    const key = `${root} ${app}`;
    (res[key] ??= []).push(r);
    console.log(`r${round + 1} ${key.padEnd(34)} ${r.rps.toFixed(0).padStart(6)} req/s  ${r.cpuUs.toFixed(1).padStart(6)} µs CPU/req  p99 ${r.p99}  load ${loadavg()[0].toFixed(2)}`);
  }
}
const med = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
console.log('\nroot | app | req/s med | CPU µs/req med | ratio req/s (per-round median) | ratio CPU');
for (const root of roots) for (const app of appsOf[root]) {
  const runs = res[`${root} ${app}`]; const base = res[`${root} baseline`] ?? res[`${resolve(values.ref)} baseline`];
  const rr = base ? med(runs.map((r, i) => r.rps / base[i].rps)).toFixed(2) : '';
  const rc = base ? med(runs.map((r, i) => base[i].cpuUs / r.cpuUs)).toFixed(2) : '';
  console.log(`${root} | ${app} | ${med(runs.map((r) => r.rps)).toFixed(0)} | ${med(runs.map((r) => r.cpuUs)).toFixed(1)} | ${rr} | ${rc}`);
}
