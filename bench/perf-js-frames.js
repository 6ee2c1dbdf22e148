// Reads `perf script` output of a loaded server and charges each sample of one thread to its nearest JavaScript frame.
// perf record -e cpu-clock -a -g -o perf.data -- sleep 5     (the server started with NODE_OPTIONS=--perf-basic-prof)
// perf script -i perf.data [--time A,B] -F comm,tid,ip,sym,dso | node bench/perf-js-frames.js [--tid N] [--under TEXT] [--depth 4] [--top 30]
//
// A V8 CPU profile (`--cpu-prof`) sees JavaScript only: the SQLite driver's commit, the kernel's fsync and socket
// writes, and V8's own runtime (map transitions, garbage collection) show up as the JavaScript function that
// called them, or not at all. `perf` sees every frame, kernel included, and names JIT frames from the map that
// `--perf-basic-prof` writes to /tmp/perf-PID.map while the process runs (read it before the process is gone).
// This prints, for one thread (by default the node thread with the most samples, the main thread under load):
// how its samples split by the kind of their leaf frame (kernel, SQLite, V8 and Node, builtins, JIT code, libc),
// then its samples charged to the nearest JavaScript frame up each stack, so that a commit's fsync is charged
// to the function that committed. --under TEXT prints instead the native call paths (--depth frames) below
// the JavaScript frames whose name contains TEXT. Shares are of the thread's samples.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values: cli } = parseArgs({
  options: { tid: { type: 'string' }, under: { type: 'string' }, depth: { type: 'string', default: '4' }, top: { type: 'string', default: '30' } },
});

/** The kind of code a leaf frame is in, from its shared object and name. */
function kindOf({ sym, dso }) {
  if (dso.includes('kernel')) return 'kernel';
  if (dso.includes('better_sqlite3')) return 'SQLite (better-sqlite3)';
  if (/perf-\d+\.map/.test(dso)) return 'JIT code';
  if (dso.includes('libc')) return 'libc';
  if (sym.startsWith('Builtins_')) return 'V8 builtins';
  return 'V8 and Node (C++)';
}

/** One frame line of `perf script` ("\t addr sym+off (dso)"), or null. */
function frameOf(line) {
  const match = /^\s+[0-9a-f]+ (.*) \((.*)\)$/.exec(line);
  return match ? { sym: match[1].replace(/\+0x[0-9a-f]+$/, ''), dso: match[2] } : null;
}

/** @type {Map<string, Array<Array<{ sym: string, dso: string }>>>} tid → its samples' stacks, leaf first */
const byThread = new Map();
let header = null;
let frames = [];
function endSample() {
  if (header && header.comm === 'node' && frames.length > 0) {
    if (!byThread.has(header.tid)) byThread.set(header.tid, []);
    byThread.get(header.tid).push(frames);
  }
  header = null;
  frames = [];
}
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') endSample();
  else if (header === null) {
    const [comm, tid] = line.trim().split(/\s+/);
    header = { comm, tid };
  } else {
    const frame = frameOf(line);
    if (frame) frames.push(frame);
  }
}
endSample();

const tid = cli.tid ?? [...byThread].sort((a, b) => b[1].length - a[1].length)[0]?.[0];
const samples = byThread.get(tid ?? '') ?? [];
if (samples.length === 0) {
  console.error('no samples of a node thread: pipe `perf script -F comm,tid,ip,sym,dso` in');
  process.exit(2);
}
const isJs = (frame) => /perf-\d+\.map/.test(frame.dso) && frame.sym.startsWith('JS:');
const count = new Map();
const add = (key) => count.set(key, (count.get(key) ?? 0) + 1);
const print = (title) => {
  console.log(title);
  for (const [key, n] of [...count].sort((a, b) => b[1] - a[1]).slice(0, Number(cli.top))) {
    console.log(`${((n / samples.length) * 100).toFixed(1).padStart(5)} %  ${key}`);
  }
  count.clear();
};

console.log(`thread ${tid}: ${samples.length} samples`);
if (cli.under) {
  for (const stack of samples) {
    const js = stack.findIndex(isJs);
    if (js < 0 || !stack[js].sym.includes(cli.under)) continue;
    const below = stack.slice(0, js).reverse().filter((frame) => frame.sym !== 'Builtins_CallApiCallback');
    add(below.slice(0, Number(cli.depth)).map((frame) => frame.sym).join(' > ') || '(the function itself)');
  }
  print(`below the JavaScript frames matching "${cli.under}":`);
} else {
  for (const stack of samples) add(kindOf(stack[0]));
  print('by the kind of the leaf frame:');
  for (const stack of samples) add(stack.find(isJs)?.sym ?? '(no JavaScript frame: the event loop, GC threads\' work on this thread, the HTTP parser)');
  print('charged to the nearest JavaScript frame:');
}
