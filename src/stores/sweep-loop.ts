// Runs a store's purge of expired records in small synchronous chunks, yielding to the event loop between them.

/**
 * One run of a sweep as a generator: each step between two `yield`s is one small synchronous batch (a
 * transaction of at most a thousand rows, a thousand Map entries), so requests are served between batches.
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

/** Resolves on the event loop's check phase: pending I/O (incoming requests) is handled first. */
const yieldToIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Starts a sweep every `intervalMs` (none when `0`): the timer is unref'd, so it never keeps the process
 * alive, and re-armed only after a run ends, so runs never overlap. A batch that throws (a lock another
 * connection holds) ends the run; reads already treat expired records as absent, so a late sweep only
 * delays the space coming back, and the next run retries.
 * @see RFC 6749 §10.5 (codes are short-lived), RFC 7009 §2.1 (tombstones kept for the retention only).
 */
export function startSweepLoop(run: SweepRun, intervalMs: number): SweepLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  async function once(): Promise<void> {
    const batches = run(Date.now());
    try {
      while (!stopped) {
        if (batches.next().done === true) return;
        await yieldToIo();
      }
    } finally {
      batches.return?.();
    }
  }

  function queue(): Promise<void> {
    const next = running.then(once);
    running = next.catch(() => undefined);
    return next;
  }

  function arm(): void {
    if (stopped || intervalMs <= 0) return;
    timer = setTimeout(() => {
      timer = null;
      void queue()
        .catch(() => undefined)
        .finally(arm);
    }, intervalMs);
    timer.unref();
  }

  arm();
  return {
    sweepNow: () => (stopped ? Promise.resolve() : queue()),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
  };
}
