// What one check of an imported client secret costs on this machine, as the router runs it: a wrong secret (never remembered), one at a time.
// node bench/bcrypt-check-cost.js [--runs 15]   (after npm run build)
//
// bcrypt at cost 10 and 12 (`MAX_BCRYPT_COST`) through `verifyBcrypt` (bcryptjs compareSync in the worker thread, so
// the message round trip is in), and scrypt at the package's own parameters (ln=15, r=8, p=1) through
// `verifyScrypt`. Prints the median, min and max of --runs checks after one warm-up each, with the machine and its
// load average: figures from a loaded machine are not the machine's (README, "How imported secrets are stored and checked").
import { cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { verifyBcrypt } from '../dist/crypto/bcrypt-secret.js';
import { hashSecretScrypt, parseScryptHash, verifyScrypt } from '../dist/crypto/scrypt-secret.js';
import { median } from './median.js';

const { values: cli } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(cli.runs);
const bcrypt = createRequire(import.meta.url)('bcryptjs');
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

/** @param {() => Promise<boolean>} check @returns {Promise<string>} */
async function timed(check) {
  await check();
  const ms = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    if (await check()) throw new Error('a wrong secret matched');
    ms.push(performance.now() - start);
  }
  return `median ${median(ms).toFixed(0)} ms (min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)})`;
}

console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${load()}`);
for (const cost of [10, 12]) {
  const hash = bcrypt.hashSync('imported-secret', cost);
  console.log(`bcrypt cost ${cost}, ${runs} checks: ${await timed(() => verifyBcrypt(hash, 'wrong-secret'))}`);
}
const scrypt = parseScryptHash(await hashSecretScrypt('imported-secret'));
console.log(`scrypt ln=15, ${runs} checks: ${await timed(() => verifyScrypt(scrypt, 'wrong-secret'))}`);
console.log(`load average after ${load()}`);
