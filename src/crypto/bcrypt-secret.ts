// Checks imported bcrypt hashes ($2a$/$2b$/$2y$, common in Node servers) in a worker thread, off the event loop.
import { Worker } from 'node:worker_threads';
import { runtimeRequire } from '../runtime-require.js';
import { bcryptWorkerFailureChannel, type BcryptWorkerFailureMessage } from '../metrics/channels.js';
import { BcryptWorkerError } from './bcrypt-worker-error.js';

/**
 * Highest bcrypt cost accepted at import: each step doubles the work (in pure JavaScript, one check at cost 12 took
 * 230 ms on one 2-core machine and 340 to 380 ms on a 2-vCPU VM; `bench/bcrypt-check-cost.js` measures a machine).
 */
export const MAX_BCRYPT_COST = 12;

const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/**
 * The most bytes of a secret bcrypt reads: it ignores the rest, so a longer secret would pass for any other with the
 * same first 72 bytes (Spring Security's CVE-2025-22228; Okta's bcrypt cache key, 2024). A longer secret is never a
 * match: the hash cannot tell whether its bytes past the 72nd are the right ones.
 */
export const MAX_BCRYPT_SECRET_BYTES = 72;

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
  /** Its end was handled (at 'exit', which follows an 'error', or when the watchdog ended it). */
  stopped: boolean;
  /** What its 'error' event told (an uncaught error in the thread), kept for its 'exit'. */
  crash: unknown;
  /** performance.now() of its last answer (`ready` or a check's), or of the check that found it idle. */
  answeredAt: number;
  /** The watchdog's timer, armed only while checks are under way (see `watch`). */
  watchdog: NodeJS.Timeout | null;
}

/** After a failed start, or a second end in a row, the first wait before the next start; it doubles with each
 * failure, up to the most. */
const FIRST_RESTART_DELAY_MS = 1_000;
const MOST_RESTART_DELAY_MS = 30_000;

/**
 * The longest a worker with checks under way may go without answering one before it is taken for hung. It checks one
 * at a time, so a burst legitimately takes long (100 checks at cost 12: about 25 to 40 s) but never goes silent for
 * longer than one check: 230 to 380 ms at the highest cost accepted (`MAX_BCRYPT_COST`, 2-core machines), plus the
 * thread's start. 10 s is some 25 times that, room for a starved CPU (a 2-vCPU VM whose CPUs other jobs took: checks of
 * 0.7 to 4.7 s), and the package's other bound on a request that waits on something it does not control
 * (`userAuthTimeout`, `bodyTimeout`: 10 s by default).
 * Not a host option: it bounds the package's own code at a capped cost, not the host's directory or network, so no
 * deployment needs another value (a slower CPU is inside the 25 times; a shorter bound only ends a rare fault a few
 * seconds sooner); and the worker is one per process while options are per router, so two routers could ask for
 * two bounds on the one worker. A failure is counted (`oauth_bcrypt_worker_failures_total`) whatever the bound.
 */
const MOST_SILENCE_MS = 10_000;

let running: Running | null = null;
let nextId = 0;
/** Workers that failed to start, or stopped or hung with checks under way, since a worker last answered a check; and
 * what the last one said. */
let failures = 0;
let lastFailure: BcryptWorkerError | null = null;
/** performance.now() before which no worker is started after a failure: the checks fail at once meanwhile. */
let restartAt = -Infinity;
/** Workers started in this process, the module they load instead of bcryptjs, and the silence that ends them:
 * `bcryptWorkerForTests` only. */
let starts = 0;
let moduleForTests: string | null = null;
let silenceLimitMs = MOST_SILENCE_MS;

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

/** Why the watchdog ended a worker: it had checks under way and answered none for `silenceLimitMs`. */
const HUNG = Symbol('hung');

/**
 * A worker's end ('error', 'exit' without one, or the watchdog's `HUNG`): every check it was sent rejects with a
 * `BcryptWorkerError`, and the next check starts a new worker. One crash or hang of a worker that had started is no
 * reason to refuse the next check: it starts a new worker at once. A worker that never became ready, or a second end
 * in a row with no check answered between, waits first: 1 s, doubling up to 30 s, the checks answered at once
 * meanwhile. So a start that keeps failing (bcryptjs gone from disk, no memory for a thread) or a worker that keeps
 * crashing (a fault that every check meets) is not retried by every request, and cannot spin threads.
 * A worker that stops while idle is not a failure: nothing was lost, and only a check starts the next one.
 * Its message is the same for every check of one failure, so the router's log says it once (per kind per 10 s).
 * After start, only the error's name and code are told: a message from code that was handed a secret is not logged.
 * Each failure is published on `DIAGNOSTICS_CHANNELS.bcryptWorkerFailure` (what `oauth_bcrypt_worker_failures_total`
 * counts), so an operator can alert on a worker that keeps failing, which the throttled log line alone does not tell.
 */
function stopped(run: Running, cause: unknown): void {
  if (run.stopped) return;
  run.stopped = true;
  unwatch(run);
  if (running === run) running = null;
  if (run.ready && run.waiting.size === 0) return;
  failures += 1;
  const waits = run.ready ? failures - 1 : failures;
  const delay = waits === 0 ? 0 : Math.min(FIRST_RESTART_DELAY_MS * 2 ** (waits - 1), MOST_RESTART_DELAY_MS);
  restartAt = performance.now() + delay;
  const next = delay === 0 ? 'the next check starts a new one' : `no new one for ${delay / 1000} s`;
  const silence = `no answer within ${silenceLimitMs / 1000} s`;
  lastFailure = new BcryptWorkerError(
    run.ready
      ? `the bcrypt worker thread ${cause === HUNG ? `hung (${silence}) and was stopped` : `stopped (${kindOf(cause)})`} with client secret checks under way; ${next}`
      : `the bcrypt worker thread failed to start: ${cause === HUNG ? silence : described(cause)}`,
  );
  // Only here, on a failure: a check that is answered publishes nothing. `hasSubscribers` first, as every channel does.
  if (bcryptWorkerFailureChannel.hasSubscribers) {
    const reason = !run.ready ? 'start_failed' : cause === HUNG ? 'hang' : 'crash';
    bcryptWorkerFailureChannel.publish({ reason, checks: run.waiting.size } satisfies BcryptWorkerFailureMessage);
  }
  for (const check of run.waiting.values()) check.reject(lastFailure);
  run.waiting.clear();
}

/**
 * Arms the watchdog of a worker that was just handed a check while idle: one timer per busy spell, not per check
 * (an answer only notes its time), unref'd so it never keeps a process alive, and cleared when the worker is idle
 * again. When it fires it looks only at progress: a worker that answered within `silenceLimitMs` is rearmed for the
 * rest, however long its queue; one that did not is ended and its checks rejected (`stopped`). The look waits for
 * setImmediate: after an event loop that was held up (a host's synchronous work), the timer can fire before the
 * answers that came meanwhile are read, and a worker that answered must not be taken for hung.
 */
function watch(run: Running, ms: number): void {
  const timer = setTimeout(() => setImmediate(() => {
    if (run.watchdog !== timer) return;
    const silent = performance.now() - run.answeredAt;
    if (silent < silenceLimitMs) return watch(run, silenceLimitMs - silent);
    stopped(run, HUNG);
    // A thread held in native code may never end: unref'd, it cannot keep the process alive either.
    run.worker.unref();
    void run.worker.terminate();
  }), ms);
  timer.unref();
  run.watchdog = timer;
}

function unwatch(run: Running): void {
  if (run.watchdog === null) return;
  clearTimeout(run.watchdog);
  run.watchdog = null;
}

function startWorker(): Running {
  const started = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { bcryptjs: moduleForTests ?? runtimeRequire().resolve('bcryptjs') },
  });
  starts += 1;
  const run: Running = { worker: started, waiting: new Map(), ready: false, stopped: false, crash: undefined, answeredAt: 0, watchdog: null };
  started.on('message', (answer: { id: number; matches: boolean } | { ready: true }) => {
    // An answer the watchdog's ending overtook: its check was already rejected, and it proves no worker sound.
    if (run.stopped) return;
    if ('ready' in answer) {
      run.ready = true;
    } else {
      // A check answered: the worker works, no back-off holds, and the next failure is again the first.
      failures = 0;
      lastFailure = null;
      const check = run.waiting.get(answer.id);
      run.waiting.delete(answer.id);
      check?.resolve(answer.matches === true);
    }
    if (run.waiting.size > 0) {
      run.answeredAt = performance.now();
    } else {
      // Idle, the worker must not keep the process alive (a CLI run, a server shutting down), nor its watchdog run.
      unwatch(run);
      started.unref();
    }
  });
  // Settled at 'exit', not at 'error': Node emits every message the thread sent before 'exit', but its 'error' can
  // overtake an answer sent just before the crash, and that answered check was rejected (500 for a right secret;
  // 2 of 10 loaded runs of bcrypt-worker-crash.test.ts). New checks go to a new worker from the 'error' on.
  started.on('error', (err) => {
    run.crash = err;
    if (running === run) running = null;
  });
  started.on('exit', (code) => stopped(run, run.crash === undefined ? code : run.crash));
  return run;
}

/**
 * Whether `presented` matches a bcrypt `storedHash` (checked by bcryptjs `compareSync` in one shared worker
 * thread, which bcryptjs compares in constant time). Checks queue in the worker, never on the event loop.
 * A worker that stops with checks under way, answers none of them for 10 s (hung: it is ended), or cannot start,
 * rejects them with `BcryptWorkerError` (a 500, never a wrong secret); a bcryptjs that cannot be found throws its
 * `Cannot find module` (a 500 too). A secret over `MAX_BCRYPT_SECRET_BYTES` in UTF-8 (as bcryptjs reads it) matches
 * nothing, answered without the worker, as Spring Security's `BCryptPasswordEncoder.matches` answers it since its
 * fix of CVE-2025-22228.
 * @see RFC 6749 §2.3.1 (client password), §5.2, §10.10.
 */
export function verifyBcrypt(storedHash: string, presented: string): Promise<boolean> {
  if (Buffer.byteLength(presented, 'utf8') > MAX_BCRYPT_SECRET_BYTES) return Promise.resolve(false);
  if (!running && lastFailure && performance.now() < restartAt) return Promise.reject(lastFailure);
  const run = (running ??= startWorker());
  const id = nextId++;
  run.worker.ref();
  if (run.waiting.size === 0) {
    run.answeredAt = performance.now();
    watch(run, silenceLimitMs);
  }
  return new Promise((resolve, reject) => {
    run.waiting.set(id, { resolve, reject });
    run.worker.postMessage({ id, secret: presented, hash: storedHash });
  });
}

/**
 * For tests only, not part of the package's API (no entry point exports this module): the running worker, so a test
 * can terminate it as a crash would; whether it loaded bcryptjs; the checks it was sent and has not answered; how
 * many workers were started; a module to load in place of bcryptjs (null: bcryptjs), so a test can make a
 * worker's start fail, or its checks hang, for real; its watchdog's timer; and the silence that ends a worker (null:
 * the 10 s default), so a test of a hang need not wait 10 s.
 */
export const bcryptWorkerForTests = {
  current: (): Worker | null => running?.worker ?? null,
  ready: (): boolean => running?.ready ?? false,
  checksUnderWay: (): number => running?.waiting.size ?? 0,
  starts: (): number => starts,
  loadInsteadOfBcryptjs(path: string | null): void {
    moduleForTests = path;
  },
  watchdog: (): NodeJS.Timeout | null => running?.watchdog ?? null,
  endSilentAfter(ms: number | null): void {
    silenceLimitMs = ms ?? MOST_SILENCE_MS;
  },
};
