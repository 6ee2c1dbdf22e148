// Compares two V8 heap snapshots (bench/soak.js --snapshots) by constructor: count and self size of each, the largest
// growth first, to name what a soak's heap grew by.
//   node bench/heap-diff.js before.heapsnapshot after.heapsnapshot [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: cli, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' } }, allowPositionals: true });
if (positionals.length !== 2) {
  process.stderr.write('usage: node bench/heap-diff.js before.heapsnapshot after.heapsnapshot [--top N]\n');
  process.exit(2);
}

/** Constructor (node type and name) → { count, bytes } of one snapshot. */
function byConstructor(path) {
  const { snapshot, nodes, strings } = JSON.parse(readFileSync(path, 'utf8'));
  const fields = snapshot.meta.node_fields;
  const types = snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
  const totals = new Map();
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[nodes[i + typeAt]];
    // Strings and code are summed by type: their "names" are their contents.
    const key = type === 'object' || type === 'closure' || type === 'native' ? `${type} ${strings[nodes[i + nameAt]]}` : `(${type})`;
    const total = totals.get(key) ?? { count: 0, bytes: 0 };
    total.count += 1;
    total.bytes += nodes[i + sizeAt];
    totals.set(key, total);
  }
  return totals;
}

const before = byConstructor(positionals[0]);
const after = byConstructor(positionals[1]);
const rows = [];
for (const key of new Set([...before.keys(), ...after.keys()])) {
  const a = before.get(key) ?? { count: 0, bytes: 0 };
  const b = after.get(key) ?? { count: 0, bytes: 0 };
  rows.push({ constructor: key, countBefore: a.count, countAfter: b.count, countDelta: b.count - a.count, bytesDelta: b.bytes - a.bytes });
}
rows.sort((x, y) => y.bytesDelta - x.bytesDelta);
const total = (map) => [...map.values()].reduce((sum, { bytes }) => sum + bytes, 0);
process.stdout.write(`total self size: ${total(before)} → ${total(after)} bytes (${total(after) - total(before)})\n`);
console.table(rows.slice(0, Number(cli.top)));
