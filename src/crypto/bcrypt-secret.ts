// Checks imported bcrypt hashes ($2a$/$2b$/$2y$, common in Node servers) in a worker thread, off the event loop.
import { Worker } from 'node:worker_threads';
import { runtimeRequire } from '../runtime-require.js';

/**
 * Highest bcrypt cost accepted at import: each step doubles the work (cost 10 ≈ 57 ms, 12 ≈ 230 ms per check
 * on the 2-core reference machine, in pure JavaScript).
 */
export const MAX_BCRYPT_COST = 12;

const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** Whether a stored hash is bcrypt with a cost from 4 to `MAX_BCRYPT_COST`. @see bcrypt (Provos & Mazières, 1999). */
export function isBcryptHash(value: string): boolean {
  const cost = Number(BCRYPT.exec(value)?.[1] ?? Number.NaN);
  return cost >= 4 && cost <= MAX_BCRYPT_COST;
}

// bcryptjs is pure JavaScript: its async API still blocks the event loop in 100 ms slices, so the checks run in
// a worker. Plain CommonJS source (eval), so it runs the same from dist/ and under a TypeScript test runner.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
parentPort.on('message', ({ id, secret, hash }) => {
  let matches = false;
  try { matches = bcrypt.compareSync(secret, hash); } catch { matches = false; }
  parentPort.postMessage({ id, matches });
});
`;

let worker: Worker | null = null;
let nextId = 0;
/** Workers started in this process, and the module they load instead of bcryptjs: `bcryptWorkerForTests` only. */
let starts = 0;
let moduleForTests: string | null = null;
const waiting = new Map<number, (matches: boolean) => void>();

function settleAll(): void {
  for (const resolve of waiting.values()) resolve(false);
  waiting.clear();
  worker = null;
}

function startWorker(): Worker {
  const started = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { bcryptjs: moduleForTests ?? runtimeRequire().resolve('bcryptjs') },
  });
  starts += 1;
  started.on('message', ({ id, matches }: { id: number; matches: boolean }) => {
    const resolve = waiting.get(id);
    waiting.delete(id);
    resolve?.(matches === true);
    // Idle, the worker must not keep the process alive (a CLI run, a server shutting down).
    if (waiting.size === 0) started.unref();
  });
  // A crashed worker fails the checks under way (no one is let in) and is replaced on the next check.
  started.on('error', settleAll);
  started.on('exit', () => {
    if (worker === started) settleAll();
  });
  return started;
}

/**
 * Whether `presented` matches a bcrypt `storedHash` (checked by bcryptjs `compareSync` in one shared worker
 * thread, which bcryptjs compares in constant time). Checks queue in the worker, never on the event loop.
 * @see RFC 6749 §2.3.1 (client password), §10.10.
 */
export function verifyBcrypt(storedHash: string, presented: string): Promise<boolean> {
  worker ??= startWorker();
  const id = nextId++;
  worker.ref();
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    worker!.postMessage({ id, secret: presented, hash: storedHash });
  });
}

/**
 * For tests only, not part of the package's API (no entry point exports this module): the running worker, so a test
 * can terminate it as a crash would; the checks it was sent and has not answered; how many workers were started; and
 * a module to load in place of bcryptjs (null: bcryptjs), so a test can make a worker's start fail for real.
 */
export const bcryptWorkerForTests = {
  current: (): Worker | null => worker,
  checksUnderWay: (): number => waiting.size,
  starts: (): number => starts,
  loadInsteadOfBcryptjs(path: string | null): void {
    moduleForTests = path;
  },
};
