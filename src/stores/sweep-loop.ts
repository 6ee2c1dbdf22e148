// Runs a store's purge of expired records in small synchronous chunks, yielding to the event loop between them.

/**
 * One run of a sweep as a generator: each step between two `yield`s is one small synchronous batch (a
 * transaction of at most a thousand rows, a thousand Map entries), so requests are served between batches.
 * A step that yields a number did no work and asks for that many ms before the next (a lock another process
 * holds, to be tried again); any other value is a batch done.
 */
export type SweepRun = (now: number) => Iterator<unknown>;

/** Records per batch in every built-in store's sweep: a few milliseconds of work each. */
export const SWEEP_BATCH = 1000;

/** A running sweep loop. */
export interface SweepLoop {
  /** Runs one sweep now (after any run under way) and resolves when it is done; what tests and hosts call. */
  sweepNow(): Promise<void>;
  /** Clears the timer; a run under way stops after its current batch, and the promise waits for it. */
  stop(): Promise<void>;
}

/** Event-loop time left to requests after each batch of a timed run, as a multiple of the batch's own time. */
const PACE = 3;
const MAX_PAUSE_MS = 1000;

/** Resolves on the event loop's check phase: pending I/O (incoming requests) is handled first. */
const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Starts a sweep every `intervalMs` (none when `0`). A timed run paces itself (after each batch it waits
 * `PACE` times the batch's duration, at most a second), so it takes at most a quarter of the event loop;
 * `sweepNow()` (tests, a host's cron) runs at full speed, yielding only to pending I/O. The timer is unref'd, so it never keeps the process
 * alive, and re-armed only after a run ends, so runs never overlap. A step that yields a number is waited for
 * (SweepRun). A batch that throws (a lock held past the store's wait) ends the run; reads already treat expired
 * records as absent, so a late sweep only delays the space coming back, and the next run retries. A timed run's
 * failure goes to `onError` (no caller sees it); a `sweepNow()` rejects to its caller instead.
 * @see RFC 6749 §10.5 (codes are short-lived), RFC 7009 §2.1 (tombstones kept for the retention only).
 */
export function startSweepLoop(run: SweepRun, intervalMs: number, onError: (err: unknown) => void = () => undefined): SweepLoop {
  const state: LoopState = { stopped: false };
  let wake: (() => void) | null = null;
  state.onStop = () => wake?.();

  /** Waits `ms` unless stop() wakes it first (close() must not wait out a pause). */
  function pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { wake = null; resolve(); }, ms);
      wake = () => { clearTimeout(timer); wake = null; resolve(); };
    });
  }

  async function once(paced: boolean): Promise<void> {
    const batches = run(Date.now());
    try {
      while (!state.stopped) {
        const started = performance.now();
        const step = batches.next();
        if (step.done === true) return;
        // A lock wait: the batch is tried again after the delay, timed or not (stop() cuts the pause short).
        if (typeof step.value === 'number') {
          await pause(step.value);
          continue;
        }
        // A timed run leaves the event loop to requests PACE times as long as its batch took, so a backlog
        // of a million expired rows costs requests about a fifth of their throughput, not three quarters.
        if (paced) await pause(Math.min((performance.now() - started) * PACE, MAX_PAUSE_MS));
        else await yieldToIo();
      }
    } finally {
      batches.return?.();
    }
  }

  // A failed batch only ends its run: the next one retries (see above).
  return scheduleRuns(state, once, intervalMs, onError);
}

/**
 * The same timing for a sweep whose batches are round trips to a database server (PostgreSQL, Redis): every
 * `intervalMs` (none when `0`) on an unref'd timer re-armed after each run, one run at a time. `sweep` checks
 * `isStopped()` between its batches; a run that fails goes to `onError` and the next one retries.
 * @see RFC 6749 §10.5, RFC 7009 §2.1.
 */
export function startAsyncSweepLoop(
  sweep: (isStopped: () => boolean) => Promise<void>,
  intervalMs: number,
  onError: (err: unknown) => void,
): SweepLoop {
  const state: LoopState = { stopped: false };
  return scheduleRuns(state, () => sweep(() => state.stopped), intervalMs, onError);
}

interface LoopState {
  stopped: boolean;
  /** Called by stop(), before it waits for the run under way. */
  onStop?: () => void;
}

/** The timer, the queue and stop() that every sweep shares. `timed` tells a run of the timer from sweepNow(). */
function scheduleRuns(state: LoopState, runOnce: (timed: boolean) => Promise<void>, intervalMs: number, onError: (err: unknown) => void): SweepLoop {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  function queue(timed: boolean): Promise<void> {
    const next = running.then(() => (state.stopped ? undefined : runOnce(timed)));
    running = next.catch(() => undefined);
    return next;
  }

  function arm(): void {
    if (state.stopped || intervalMs <= 0) return;
    timer = setTimeout(() => {
      timer = null;
      void queue(true).catch(onError).finally(arm);
    }, intervalMs);
    timer.unref();
  }

  arm();
  return {
    sweepNow: () => queue(false),
    async stop() {
      state.stopped = true;
      state.onStop?.();
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
