// Wraps a Store so every call of every part is timed and its outcome reported, for store latency and error metrics.
import type { RateLimitStore, Store } from '../stores/contract.js';
import { markInProcess } from '../stores/memory/rate-limits.js';
import { isStoreUnavailableError } from '../stores/store-unavailable-error.js';

/**
 * A timed part's name (the `part` label of the store-call metrics). Written out rather than derived from TIMED_PARTS,
 * which the package does not export, so the published type names nothing a host cannot reach.
 */
export type TimedPart = 'clients' | 'codes' | 'tokens' | 'consents' | 'keys' | 'rateLimits';

// A record, so that a part added to TimedPart and not here fails to compile.
const TIMED: Readonly<Record<TimedPart, true>> = { clients: true, codes: true, tokens: true, consents: true, keys: true, rateLimits: true };

/** The parts whose methods are timed. `revocations` is not: `mark()` is synchronous, local and on the hot path. */
export const TIMED_PARTS = Object.keys(TIMED) as readonly TimedPart[];

/** How a store call ended: resolved, rejected with `StoreUnavailableError`, or rejected with anything else. */
export type StoreCallOutcome = 'ok' | 'unavailable' | 'error';

/** Told of every store call once it settles. */
export type StoreCallObserver = (part: TimedPart, method: string, outcome: StoreCallOutcome, seconds: number) => void;

/** Every function-valued property name of `object`, own or inherited (class stores keep methods on the prototype). */
function methodNames(object: object): string[] {
  const names = new Set<string>();
  for (let proto: object | null = object; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof (object as Record<string, unknown>)[name] === 'function') names.add(name);
    }
  }
  return [...names];
}

function outcomeOf(err: unknown): StoreCallOutcome {
  return isStoreUnavailableError(err) ? 'unavailable' : 'error';
}

/** Reads `name` from `target` on every access, so a getter or a field that changes stays live. */
function delegate(wrapped: object, target: object, name: string): void {
  Object.defineProperty(wrapped, name, { get: () => (target as Record<string, unknown>)[name], enumerable: true });
}

/** A stand-in for one part whose methods report to `observe`; its other properties read through to the part. */
function instrumentPart(part: TimedPart, target: object, observe: StoreCallObserver): object {
  const wrapped: Record<string, unknown> = {};
  const methods = methodNames(target);
  for (const name of Object.keys(target)) if (!methods.includes(name)) delegate(wrapped, target, name);
  for (const method of methods) {
    const original = (target as Record<string, (...args: unknown[]) => unknown>)[method]!;
    wrapped[method] = function timedStoreCall(...args: unknown[]): unknown {
      const from = performance.now();
      let result: unknown;
      try {
        result = original.apply(target, args);
      } catch (err) {
        observe(part, method, outcomeOf(err), (performance.now() - from) / 1000);
        throw err;
      }
      if (typeof (result as PromiseLike<unknown> | null)?.then !== 'function') {
        observe(part, method, 'ok', (performance.now() - from) / 1000);
        return result;
      }
      return Promise.resolve(result).then(
        (value: unknown) => {
          observe(part, method, 'ok', (performance.now() - from) / 1000);
          return value;
        },
        (err: unknown) => {
          observe(part, method, outcomeOf(err), (performance.now() - from) / 1000);
          throw err;
        },
      );
    };
  }
  return wrapped;
}

/**
 * A Store with the same parts, tiers and behaviour as `store`, each call of `clients`, `codes`, `tokens`,
 * `consents`, `keys` and `rateLimits` timed and reported to `observe` with the part and method names (a
 * bounded set: never an argument). `revocations` is read through untouched and `close` calls the original;
 * other properties read through too. Calls keep their `this` (the original part), results and errors.
 * @see DESIGN §2 (the Store contract), `StoreUnavailableError` (what counts as `unavailable`).
 */
export function instrumentStore<S extends Store>(store: S, observe: StoreCallObserver): S {
  const wrapped: Record<string, unknown> = {};
  for (let proto: object | null = store; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || name in wrapped) continue;
      const value = (store as unknown as Record<string, unknown>)[name];
      if ((TIMED_PARTS as readonly string[]).includes(name) && typeof value === 'object' && value !== null) {
        wrapped[name] = instrumentPart(name as TimedPart, value, observe);
        // Timing in-process counters takes them nowhere: the router's unkeyed-keys warning still has nothing to say.
        if (name === 'rateLimits') markInProcess(wrapped[name] as RateLimitStore, value as RateLimitStore);
      } else if (typeof value === 'function') {
        wrapped[name] = (value as (...args: unknown[]) => unknown).bind(store);
      } else {
        delegate(wrapped, store, name);
      }
    }
  }
  return wrapped as S;
}
