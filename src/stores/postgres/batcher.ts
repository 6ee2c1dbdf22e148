// Calls made while the database is still answering earlier ones, sent together as one statement when it is free.
import { StoreUnavailableError } from '../store-unavailable-error.js';

/** One call's answer within a batch: its value, or the error that call alone failed with. */
export type BatchOutcome<R> =
  | { readonly ok: true; readonly value: R | PromiseLike<R> }
  | { readonly ok: false; readonly error: unknown };

/** Sends one batch of calls as one statement; answers each call, in the order given. */
export type BatchRunner<I, R> = (items: readonly I[]) => Promise<readonly BatchOutcome<R>[]>;

/** How many batches may be at the database at once, and the most calls one batch carries. */
export interface BatcherLimits {
  readonly inFlight: number;
  readonly maxItems: number;
}

/**
 * Batches by back-pressure, not by time: a call made while fewer than `inFlight` batches are at the database
 * is sent at once, alone, so an idle store answers as fast as it did call by call; calls made while they are
 * all out wait in a queue, and the first batch to come back sends the whole queue (up to `maxItems`) as the
 * next one. Under load each round trip then carries every call that arrived during the last one, so the
 * round trips per call fall as the load rises, with no timer and no delay that a quiet store would pay.
 * A batch that fails as a whole (connection lost, timeout) rejects each of its calls with that error;
 * nothing is retried here, so a call is answered exactly once, by its own batch.
 * @see DESIGN §3a (one store round trip per step): a batch is one round trip for many steps.
 */
export function createBatcher<I, R>(run: BatchRunner<I, R>, limits: BatcherLimits): (item: I) => Promise<R> {
  interface Waiting {
    readonly item: I;
    resolve(value: R | PromiseLike<R>): void;
    reject(reason: unknown): void;
  }
  let queue: Waiting[] = [];
  let out = 0;

  function send(): void {
    const batch = queue.length <= limits.maxItems ? queue : queue.slice(0, limits.maxItems);
    queue = batch === queue ? [] : queue.slice(limits.maxItems);
    out += 1;
    let answered: Promise<readonly BatchOutcome<R>[]>;
    try {
      answered = run(batch.map((waiting) => waiting.item));
    } catch (error) {
      answered = Promise.reject(error);
    }
    answered
      .then((outcomes) => {
        if (outcomes.length !== batch.length) {
          throw new Error(`batch answered ${outcomes.length} calls of ${batch.length}`);
        }
        outcomes.forEach((outcome, i) => {
          if (outcome.ok) batch[i]!.resolve(outcome.value);
          else batch[i]!.reject(outcome.error);
        });
      })
      .catch((error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
      })
      // Callers' continuations run before the slot is freed, so a call one makes at once joins the next batch.
      .finally(() => {
        out -= 1;
        if (queue.length > 0 && out < limits.inFlight) send();
      });
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (out < limits.inFlight) send();
    });
}

/** SQLSTATEs of lock contention between two batches (a deadlock broken, a serialization failure, NOWAIT). */
const CONTENTION = new Set(['40P01', '40001', '55P03']);

/**
 * Whether the calls of a failed batch (which committed nothing) are worth sending one by one: yes after a fault
 * of one call (a token hash saved twice) or contention with another batch, so each call fails or succeeds as
 * it would have alone; no when the database is out of reach or timed out (each call would only fail again).
 */
export function judgedAlone(error: unknown): boolean {
  if (!(error instanceof StoreUnavailableError)) return true;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && CONTENTION.has(code);
}
