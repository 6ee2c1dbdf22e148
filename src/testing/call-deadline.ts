// Wraps a store so that each call a conformance rule makes fails, naming the method, if it does not settle in time.
import type { Store } from '../stores/contract.js';

/** Default of `StoreConformanceOptions.callTimeoutMs`, when `timeoutMs` is not below twice it. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/**
 * What a call that has not settled by its deadline rejects with. The conformance harness's own error, never a
 * store's: a rule tells it from a `StoreUnavailableError` (the outage rule reports it as a hang, not a wrong error).
 */
export class CallDeadlineError extends Error {
  override readonly name = 'CallDeadlineError';
  constructor(readonly method: string, readonly ms: number) {
    super(`${method} did not settle within ${ms} ms (a store call must resolve, or reject with StoreUnavailableError, `
      + 'within callTimeoutMs: a driver call with no timeout of its own hangs the router\'s request as well; '
      + 'raise callTimeoutMs for a slow backend)');
  }
}

/** Whether `err` is a call's deadline passing, not something the store answered. */
export function isCallDeadlineError(err: unknown): err is CallDeadlineError {
  return err instanceof CallDeadlineError;
}

/** The `callTimeoutMs` a run uses: the option, or DEFAULT_CALL_TIMEOUT_MS capped at half the rule's timeout. */
export function callTimeoutOf(options: { readonly callTimeoutMs?: number; readonly timeoutMs?: number }, ruleTimeoutMs: number): number {
  return options.callTimeoutMs ?? Math.min(DEFAULT_CALL_TIMEOUT_MS, Math.max(1, Math.floor(ruleTimeoutMs / 2)));
}

/** `promise`, or a CallDeadlineError naming `method` once `ms` have passed without it settling. */
function withDeadline<T>(promise: PromiseLike<T>, method: string, ms: number): Promise<T> {
  const guarded = new Promise<T>((resolve, reject) => {
    // Test tooling, not protocol logic: the timer only names the hang the rule's own guard would report vaguely.
    const timer = setTimeout(() => {
      // A call its rule left behind (the rule failed on something else first) must not turn its hang into an
      // unhandled rejection, which would crash a plain Node runner; a rule that awaits it still gets the error.
      guarded.catch(() => undefined);
      reject(new CallDeadlineError(method, ms));
    }, ms);
    // The rule's own guard keeps the process alive while a rule runs; this timer must not once it is over.
    timer.unref();
    promise.then(
      (value) => { clearTimeout(timer); resolve(value); },
      (err: unknown) => { clearTimeout(timer); reject(err); },
    );
  });
  return guarded;
}

/** `method` of `owner` as a function whose thenable answers get a deadline; any other answer (or a throw) is left as is. */
function guarded(owner: object, method: (...args: unknown[]) => unknown, name: string, ms: number): (...args: unknown[]) => unknown {
  return (...args) => {
    const answer: unknown = method.apply(owner, args);
    // Only thenables: the synchronous methods (`revocations.mark`, `clientCopies.find`) answer as they are, and the
    // rule that checks every method answers with a promise still sees a store that does not.
    if (answer !== null && (typeof answer === 'object' || typeof answer === 'function') && typeof (answer as PromiseLike<unknown>).then === 'function') {
      return withDeadline(answer as PromiseLike<unknown>, name, ms);
    }
    return answer;
  };
}

/** A view of `target` whose function properties are `guarded` (named `${path}.${key}`), each made once. */
function guardedView<T extends object>(target: T, path: string, ms: number, deeper: boolean): T {
  const made = new Map<PropertyKey, { of: unknown; as: unknown }>();
  // The proxy's own target is an empty stand-in: a frozen part's methods could not be answered wrapped otherwise (a
  // proxy must answer a non-writable, non-configurable property's own value).
  return new Proxy({} as T, {
    has: (_, key) => Reflect.has(target, key),
    ownKeys: () => Reflect.ownKeys(target),
    getOwnPropertyDescriptor(_, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
      return descriptor && { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(target),
    set: (_, key, value) => Reflect.set(target, key, value),
    get(_, key) {
      const object = target;
      const value: unknown = Reflect.get(object, key);
      if (typeof key !== 'string') return value;
      const kept = made.get(key);
      if (kept && kept.of === value) return kept.as;
      let as: unknown = value;
      if (typeof value === 'function') as = guarded(object, value as (...args: unknown[]) => unknown, `${path}.${key}`, ms);
      else if (deeper && value !== null && typeof value === 'object') as = guardedView(value, `${path}.${key}`, ms, false);
      else return value;
      made.set(key, { of: value, as });
      return as;
    },
  });
}

/**
 * `store` as the rules see it: every call of a method of the store or of one of its parts (`store.tokens.saveTokens`)
 * that answers a promise rejects with a CallDeadlineError naming the method if it has not settled within `ms`, so a
 * hung call fails its rule by name, instead of the whole rule's timeout. The hooks (`destroyStore`,
 * `simulateOutage`, `openPeer`) are handed the store itself, never this view: see `unguarded`.
 * @see RFC 6749 §5.2 (`temporarily_unavailable`: a store that never answers leaves the request hanging instead).
 */
export function guardCalls(store: Store, ms: number): Store {
  const view = guardedView(store, 'store', ms, true);
  originals.set(view, store);
  return view;
}

const originals = new WeakMap<Store, Store>();

/** The store a view of `guardCalls` was made of, or `store` itself when it is none. */
export function unguarded(store: Store): Store {
  return originals.get(store) ?? store;
}
