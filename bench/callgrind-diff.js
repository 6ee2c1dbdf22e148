// Names and compares the functions of two callgrind dumps kept by `bench/instructions.js --keep DIR`, per request.
// node bench/callgrind-diff.js DIR/open DIR/guarded [--top 40]
//
// Each argument is a kept scenario without its extension: <path>.callgrind (the dump), <path>.perf-map (V8's map
// of its JIT code, from node --perf-basic-prof) and <path>.json (how many requests were counted). Self
// instructions per function come from `callgrind_annotate` (valgrind's); a frame callgrind could only give as an
// address is named from the map when it falls in JIT code ("JIT JS:*check file:…:120", "JIT RegExp:^Bearer +").
// Prints the total per request of each, then the functions whose self count per request grew or shrank most
// from the first to the second: where the instructions of one scenario over another go, by name.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: cli, positionals } = parseArgs({ options: { top: { type: 'string', default: '40' } }, allowPositionals: true });
if (positionals.length !== 2) throw new Error('usage: node bench/callgrind-diff.js DIR/first DIR/second [--top 40]');
const TOP = Number(cli.top);

/** The JIT code ranges of a perf map ("start size name" per line, hex), sorted by start. */
function readPerfMap(file) {
  const ranges = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [start, size, ...name] = line.split(' ');
    return { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name: name.join(' ') };
  });
  return ranges.sort((a, b) => a.start - b.start);
}

/** The JIT function at `address`, by binary search, or undefined. */
function jitName(ranges, address) {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (ranges[mid].end <= address) low = mid + 1;
    else if (ranges[mid].start > address) high = mid - 1;
    else return ranges[mid].name;
  }
  return undefined;
}

/** Self instructions per request by function name (JIT addresses named, C++ signatures cut at the parameters). */
function selfPerRequest(path) {
  const { requests } = JSON.parse(readFileSync(`${path}.json`, 'utf8'));
  const ranges = readPerfMap(`${path}.perf-map`);
  const report = execFileSync('callgrind_annotate', ['--threshold=100', `${path}.callgrind`], { encoding: 'utf8', maxBuffer: 256 << 20 });
  const byName = new Map();
  let total = 0;
  for (const line of report.split('\n')) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!match || match[2].includes('PROGRAM TOTALS')) continue;
    const count = Number(match[1].replaceAll(',', ''));
    let name = match[2];
    const address = /^\?\?\?:0x([0-9a-f]+) /.exec(name);
    if (address) name = `JIT ${jitName(ranges, parseInt(address[1], 16)) ?? name}`;
    name = name.replace(/^\?\?\?:/, '').replace(/\(.*$/, '').slice(0, 140);
    byName.set(name, (byName.get(name) ?? 0) + count / requests);
    total += count / requests;
  }
  return { byName, total };
}

const [first, second] = positionals.map(selfPerRequest);
const k = (n) => `${(n / 1000).toFixed(1)}k`;
console.log(`${positionals[0]}: ${k(first.total)} instructions per request; ${positionals[1]}: ${k(second.total)} (${second.total >= first.total ? '+' : ''}${k(second.total - first.total)})\n`);
const names = new Set([...first.byName.keys(), ...second.byName.keys()]);
const rows = [...names].map((name) => {
  const a = first.byName.get(name) ?? 0;
  const b = second.byName.get(name) ?? 0;
  return { name, a, b, delta: b - a };
}).sort((x, y) => y.delta - x.delta);
const line = ({ name, a, b, delta }) => `${delta.toFixed(0).padStart(8)} ${a.toFixed(0).padStart(8)} ${b.toFixed(0).padStart(8)}  ${name}`;
console.log('   +/req    first   second  function (self instructions per request)');
for (const row of rows.slice(0, TOP)) console.log(line(row));
console.log('     …');
for (const row of rows.slice(-Math.ceil(TOP / 4))) console.log(line(row));
