// One 'error' listener on a pool however many stores share it, so a schema per tenant on one host pool draws no listener warning.

/** The part of a pool this needs: an EventEmitter's `on` and `removeListener` for `'error'`, when it has them. */
interface ErrorEmitter {
  on?(event: 'error', listener: (err: Error) => void): unknown;
  removeListener?(event: 'error', listener: (err: Error) => void): unknown;
}

interface Shared {
  readonly listeners: Set<(err: Error) => void>;
  readonly dispatch: (err: Error) => void;
}

const byPool = new WeakMap<object, Shared>();

/**
 * Hands each `'error'` the pool emits (node-postgres: an idle connection lost) to `listener`, through one listener
 * per pool shared by every store on it. One listener per store put a host that opens a store per tenant schema on
 * its one pool past Node's default of 10 (`MaxListenersExceededWarning` at the 11th store). A pool that is no
 * EventEmitter (the published `PostgresPool` type does not ask for one) emits nothing, and nothing is added.
 * @returns what takes `listener` off; the pool's listener goes with the last store's.
 */
export function listenForPoolErrors(pool: ErrorEmitter, listener: (err: Error) => void): () => void {
  if (typeof pool.on !== 'function') return () => {};
  let shared = byPool.get(pool);
  if (shared === undefined) {
    const listeners = new Set<(err: Error) => void>();
    // A copy: a store closed by its own logger's call must not skip the others' listeners.
    shared = { listeners, dispatch: (err) => { for (const each of [...listeners]) each(err); } };
    byPool.set(pool, shared);
    pool.on('error', shared.dispatch);
  }
  const { listeners, dispatch } = shared;
  // A wrapper of its own, so the same function given twice is two registrations, each taken off once.
  const registration = (err: Error): void => listener(err);
  listeners.add(registration);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    listeners.delete(registration);
    if (listeners.size > 0) return;
    byPool.delete(pool);
    pool.removeListener?.('error', dispatch);
  };
}
