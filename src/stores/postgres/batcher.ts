// Calls made while the database is still answering earlier ones, sent together as one statement when it is free.
import { AsyncResource } from 'node:async_hooks';
import { StoreUnavailableError } from '../store-unavailable-error.js';

/** One call's answer within a batch: its value, or the error that call alone failed with. */
export type BatchOutcome<R> =
  | { readonly ok: true; readonly value: R | PromiseLike<R> }
  | { readonly ok: false; readonly error: unknown };

/**
 * Sends one batch of calls as one statement; answers each call, in the order given. `sendBy[i]` is the moment
 * (`performance.now()`) after which no statement may be sent for call i (`Infinity`: no limit): the batch's own
 * statement goes out by the earliest of them, or not at all (query.ts, `PostgresRunner.query`).
 */
export type BatchRunner<I, R> = (items: readonly I[], sendBy: readonly number[]) => Promise<readonly BatchOutcome<R>[]>;

/** How many batches may be at the database at once, and the most calls one batch carries. */
export interface BatcherLimits {
  readonly inFlight: number;
  readonly maxItems: number;
  /**
   * Milliseconds from a call to the last moment a statement of it may be sent (the store's `queryTimeoutMs`): a call
   * still queued then is taken out of the queue and rejected with StoreUnavailableError, never sent. Absent: no limit.
   */
  readonly sendWithinMs?: number;
}

/** The rejection of a call that was never sent: nothing of it reached the database. */
function unsentError(ms: number): StoreUnavailableError {
  return new StoreUnavailableError(`PostgreSQL store unavailable (not sent within ${ms} ms: the statement ahead of it had not answered; nothing of this call was sent)`);
}

/**
 * Batches by back-pressure, not by time: a call made while fewer than `inFlight` batches are at the database
 * is sent at once, alone, so an idle store answers as fast as it did call by call; calls made while they are
 * all out wait in a queue, and the first batch to come back sends the whole queue (up to `maxItems`) as the
 * next one. Under load each round trip then carries every call that arrived during the last one, so the
 * round trips per call fall as the load rises, with no timer and no delay that a quiet store would pay.
 * A batch that fails as a whole (connection lost, timeout) rejects each of its calls with that error;
 * nothing is retried here, so a call is answered exactly once, by its own batch.
 *
 * A call waits in the queue for at most `sendWithinMs`: behind a statement that does not answer (a lock, a lossy
 * link, a pool whose every connection is stalled) it is then taken out and rejected, unsent, so that whatever was
 * ahead of it, it settles within `sendWithinMs` plus its own statement's timeout. One timer, for the queue's oldest call.
 *
 * A batch is sent in the async context of its oldest call (Node's AsyncLocalStorage, which tracers such as
 * OpenTelemetry and per-request loggers read): a queued batch is otherwise sent from the continuation of the batch
 * that came back, so a traced host filed its statement under the request that opened the first batch, one usually
 * answered already, and never under a request whose call it carried. A call that waits keeps an AsyncResource for that
 * (made only then: a quiet store's calls are sent at once, in their own context); each caller resumes in its own.
 * @see DESIGN §3a (one store round trip per step): a batch is one round trip for many steps.
 */
export function createBatcher<I, R>(run: BatchRunner<I, R>, limits: BatcherLimits): (item: I) => Promise<R> {
  interface Waiting {
    readonly item: I;
    /** The last moment a statement of this call may be sent (`Infinity`: none). */
    readonly sendBy: number;
    /** The caller's async context, kept by a call that had to wait; absent for one sent at once, in its own. */
    readonly context: AsyncResource | undefined;
    resolve(value: R | PromiseLike<R>): void;
    reject(reason: unknown): void;
  }
  let queue: Waiting[] = [];
  let out = 0;
  const within = limits.sendWithinMs;
  // Armed for the queue's oldest call while one waits: calls queue in the order they are made, all with one limit.
  let expiry: ReturnType<typeof setTimeout> | undefined;

  function watchQueue(): void {
    if (expiry !== undefined || queue.length === 0 || within === undefined) return;
    expiry = setTimeout(expire, Math.max(0, Math.ceil(queue[0]!.sendBy - performance.now())));
  }

  /** Takes out and rejects the calls whose moment to be sent has passed: none of them was sent. */
  function expire(): void {
    expiry = undefined;
    // A timer may fire a fraction of a millisecond before the moment it was set for.
    const now = performance.now() + 1;
    let late = 0;
    while (late < queue.length && queue[late]!.sendBy <= now) late += 1;
    const expired = queue.slice(0, late);
    queue = queue.slice(late);
    for (const waiting of expired) waiting.reject(unsentError(within!));
    watchQueue();
  }

  function send(): void {
    const batch = queue.length <= limits.maxItems ? queue : queue.slice(0, limits.maxItems);
    queue = batch === queue ? [] : queue.slice(limits.maxItems);
    if (expiry !== undefined) {
      clearTimeout(expiry);
      expiry = undefined;
    }
    watchQueue();
    out += 1;
    let answered: Promise<readonly BatchOutcome<R>[]>;
    try {
      const items = batch.map((waiting) => waiting.item);
      const sendBy = batch.map((waiting) => waiting.sendBy);
      const context = batch[0]!.context;
      answered = context === undefined ? run(items, sendBy) : context.runInAsyncScope(run, undefined, items, sendBy);
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
      const now = out < limits.inFlight;
      const context = now ? undefined : new AsyncResource('express-oauth-router:postgres-batch');
      queue.push({ item, sendBy: within === undefined ? Infinity : performance.now() + within, context, resolve, reject });
      if (now) send();
      else watchQueue();
    });
}

/** The moment a batch's statement must be sent by: the earliest of its calls'. */
export function earliest(sendBy: readonly number[]): number {
  let by = Infinity;
  for (const moment of sendBy) if (moment < by) by = moment;
  return by;
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
