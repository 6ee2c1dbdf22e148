// Checks imported bcrypt hashes ($2a$/$2b$/$2y$, common in Node servers) in a worker thread, off the event loop.
import { Worker } from 'node:worker_threads';
import { runtimeRequire } from '../runtime-require.js';
import { BcryptWorkerError } from './bcrypt-worker-error.js';

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
// a worker. Plain CommonJS source (eval), so it runs the same from dist/ and under a TypeScript test runner. It says
// `ready` once bcryptjs is loaded: a worker that stops before that failed to start (see `stopped`).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
parentPort.on('message', ({ id, secret, hash }) => {
  let matches = false;
  try { matches = bcrypt.compareSync(secret, hash); } catch { matches = false; }
  parentPort.postMessage({ id, matches });
});
parentPort.postMessage({ ready: true });
`;

/** A check sent to a worker and not answered yet. */
interface Waiting {
  readonly resolve: (matches: boolean) => void;
  readonly reject: (err: BcryptWorkerError) => void;
}

/** A worker and the checks it was sent: its own, so that a stopped worker's end settles no other worker's checks. */
interface Running {
  readonly worker: Worker;
  readonly waiting: Map<number, Waiting>;
  /** bcryptjs loaded: the worker started. */
  ready: boolean;
  /** Its end was handled ('error' and then 'exit' both come). */
  stopped: boolean;
}

/** After a failed start, the first wait before the next start; it doubles with each failure, up to the most. */
const FIRST_RESTART_DELAY_MS = 1_000;
const MOST_RESTART_DELAY_MS = 30_000;

let running: Running | null = null;
let nextId = 0;
/** Workers that stopped before they were ready, since the last one that was; and what the last one said. */
let failedStarts = 0;
let startFailure: BcryptWorkerError | null = null;
/** performance.now() before which no worker is started after a failed start: the checks fail at once meanwhile. */
let restartAt = -Infinity;
/** Workers started in this process, and the module they load instead of bcryptjs: `bcryptWorkerForTests` only. */
let starts = 0;
let moduleForTests: string | null = null;

/** What stopped a worker, told without any message: `exit code 1`, `Error ERR_WORKER_OUT_OF_MEMORY`. */
function kindOf(cause: unknown): string {
  if (typeof cause === 'number') return `exit code ${cause}`;
  if (!(cause instanceof Error)) return typeof cause;
  const code = (cause as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? `${cause.name} ${code}` : cause.name;
}

/** `kindOf` and the first line of the message (a `Cannot find module` carries its require stack on the next ones). */
function described(cause: unknown): string {
  return cause instanceof Error ? `${kindOf(cause)}: ${cause.message.split('\n', 1)[0]}` : kindOf(cause);
}

/**
 * A worker's end ('error', or 'exit' without one): every check it was sent rejects with a `BcryptWorkerError`, and
 * the next check starts a new worker, at once after a worker that had started (a crash: one is no reason to refuse
 * the next), or, after one that never became ready, once a wait of 1 s, doubling up to 30 s, has passed: a start that
 * keeps failing (bcryptjs gone from disk, no memory for a thread) is not retried by every request.
 * Its message is the same for every check of one failure, so the router's log says it once (per kind per 10 s).
 * After start, only the error's name and code are told: a message from code that was handed a secret is not logged.
 */
function stopped(run: Running, cause: unknown): void {
  if (run.stopped) return;
  run.stopped = true;
  if (running === run) running = null;
  let err: BcryptWorkerError;
  if (run.ready) {
    err = new BcryptWorkerError(
      `the bcrypt worker thread stopped (${kindOf(cause)}) with client secret checks under way; the next check starts a new one`,
    );
  } else {
    failedStarts += 1;
    restartAt = performance.now() + Math.min(FIRST_RESTART_DELAY_MS * 2 ** (failedStarts - 1), MOST_RESTART_DELAY_MS);
    err = startFailure = new BcryptWorkerError(`the bcrypt worker thread failed to start: ${described(cause)}`);
  }
  for (const check of run.waiting.values()) check.reject(err);
  run.waiting.clear();
}

function startWorker(): Running {
  const started = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { bcryptjs: moduleForTests ?? runtimeRequire().resolve('bcryptjs') },
  });
  starts += 1;
  const run: Running = { worker: started, waiting: new Map(), ready: false, stopped: false };
  started.on('message', (answer: { id: number; matches: boolean } | { ready: true }) => {
    if ('ready' in answer) {
      run.ready = true;
      failedStarts = 0;
      startFailure = null;
    } else {
      const check = run.waiting.get(answer.id);
      run.waiting.delete(answer.id);
      check?.resolve(answer.matches === true);
    }
    // Idle, the worker must not keep the process alive (a CLI run, a server shutting down).
    if (run.waiting.size === 0) started.unref();
  });
  started.on('error', (err) => stopped(run, err));
  started.on('exit', (code) => stopped(run, code));
  return run;
}

/**
 * Whether `presented` matches a bcrypt `storedHash` (checked by bcryptjs `compareSync` in one shared worker
 * thread, which bcryptjs compares in constant time). Checks queue in the worker, never on the event loop.
 * A worker that stops with checks under way, or cannot start, rejects them with `BcryptWorkerError` (a 500, never a
 * wrong secret); a bcryptjs that cannot be found throws its `Cannot find module` (a 500 too).
 * @see RFC 6749 §2.3.1 (client password), §5.2, §10.10.
 */
export function verifyBcrypt(storedHash: string, presented: string): Promise<boolean> {
  if (!running && startFailure && performance.now() < restartAt) return Promise.reject(startFailure);
  const run = (running ??= startWorker());
  const id = nextId++;
  run.worker.ref();
  return new Promise((resolve, reject) => {
    run.waiting.set(id, { resolve, reject });
    run.worker.postMessage({ id, secret: presented, hash: storedHash });
  });
}

/**
 * For tests only, not part of the package's API (no entry point exports this module): the running worker, so a test
 * can terminate it as a crash would; whether it loaded bcryptjs; the checks it was sent and has not answered; how
 * many workers were started; and a module to load in place of bcryptjs (null: bcryptjs), so a test can make a
 * worker's start fail for real.
 */
export const bcryptWorkerForTests = {
  current: (): Worker | null => running?.worker ?? null,
  ready: (): boolean => running?.ready ?? false,
  checksUnderWay: (): number => running?.waiting.size ?? 0,
  starts: (): number => starts,
  loadInsteadOfBcryptjs(path: string | null): void {
    moduleForTests = path;
  },
};
