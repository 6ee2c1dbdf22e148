// Runs work one at a time per key, in arrival order, with a bound on how many may wait.

/** Thrown by `OneAtATime.turn` when `maxWaiting` calls already wait for the key. */
export class TooManyWaitingError extends Error {}

/** A turn per key; see `createOneAtATime`. */
export interface OneAtATime {
  /** Resolves when it is this call's turn for `key`, with the function that ends the turn (call it once).
   * @throws TooManyWaitingError, at once, when the queue of `key` is full. */
  turn(key: string): Promise<() => void>;
  /** Keys with a turn running or waiting (for tests: none are kept once their queues drain). */
  readonly size: number;
}

/**
 * One turn at a time per key, first come first served. A key's entry lives only while a turn runs or waits,
 * so memory grows with the keys busy now, never with every key seen; `maxWaiting` bounds each queue.
 * No timer: a turn passes when the one before it ends.
 * @see RFC 6819 §4.3.5 (bounding online guessing by what each attempt costs the server).
 */
export function createOneAtATime(maxWaiting: number): OneAtATime {
  const queues = new Map<string, Array<() => void>>();

  function release(key: string): void {
    const waiting = queues.get(key)!;
    const next = waiting.shift();
    if (next) next();
    else queues.delete(key);
  }

  return {
    turn(key) {
      const waiting = queues.get(key);
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        release(key);
      };
      if (!waiting) {
        queues.set(key, []);
        return Promise.resolve(end);
      }
      if (waiting.length >= maxWaiting) return Promise.reject(new TooManyWaitingError(`more than ${maxWaiting} waiting`));
      return new Promise((resolve) => waiting.push(() => resolve(end)));
    },
    get size() {
      return queues.size;
    },
  };
}
