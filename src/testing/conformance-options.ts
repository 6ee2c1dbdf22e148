// Checks the conformance suite's options before any store is made, and picks the rules `only` selects.
import type { Store } from '../stores/contract.js';
import type { ConformanceRule, StoreConformanceOptions } from './conformance-types.js';
import { MAX_TIMER_MS } from '../stores/timer-range.js';
import { DEFAULT_RULE_TIMEOUT_MS } from './run-rule.js';

/** Extra time vitest allows a test beyond the rule's own guard, so the guard's clearer message wins. */
export const VITEST_MARGIN_MS = 5_000;

/**
 * The longest `timeoutMs`: the rule's guard and vitest's own timeout (the guard plus `VITEST_MARGIN_MS`) are timers,
 * and a timer set past 2^31 − 1 ms fires after 1 ms, so every rule failed at once as hung.
 */
const MAX_RULE_TIMEOUT_MS = MAX_TIMER_MS - VITEST_MARGIN_MS;

const KNOWN = new Set(['name', 'createStore', 'destroyStore', 'simulateOutage', 'openPeer', 'outageSparesPeer', 'rounds', 'only', 'timeoutMs', 'callTimeoutMs']);

/**
 * Refuses options the suite would otherwise ignore or trip over later: an unknown key (a typo such as `roundz`
 * would silently run the default), a missing `createStore`, a `rounds`, `timeoutMs` or `callTimeoutMs` that is not a
 * positive integer (or a `timeoutMs` past what a timer can wait, or a `callTimeoutMs` not below `timeoutMs`), an `only` that is neither a list of strings nor a function. Returns the options as the suite runs them,
 * over `Store`: the suite hands `destroyStore`, `simulateOutage` and `openPeer` only stores `createStore` made, so
 * each still gets the `S` it was typed for.
 * @throws TypeError naming the option.
 * @see RFC 6749 §10.3–10.5 (what the suite holds a store to).
 */
export function checkConformanceOptions<S extends Store>(options: StoreConformanceOptions<S>): StoreConformanceOptions {
  if (options === null || typeof options !== 'object') throw new TypeError('the conformance suite needs an options object');
  const unknown = Object.keys(options).filter((key) => !KNOWN.has(key));
  if (unknown.length > 0) {
    throw new TypeError(`unknown conformance option ${unknown.map((key) => `'${key}'`).join(', ')}; known: ${[...KNOWN].join(', ')}`);
  }
  if (typeof options.createStore !== 'function') throw new TypeError('createStore must be a function returning a fresh store');
  if (options.openPeer !== undefined && typeof options.openPeer !== 'function') {
    throw new TypeError('openPeer must be a function returning a second store on the backend of the store it is given');
  }
  for (const key of ['rounds', 'timeoutMs', 'callTimeoutMs'] as const) {
    const value = options[key];
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new TypeError(`${key} must be a positive integer`);
  }
  if (options.timeoutMs !== undefined && options.timeoutMs > MAX_RULE_TIMEOUT_MS) {
    throw new TypeError(`timeoutMs must be at most ${MAX_RULE_TIMEOUT_MS} milliseconds (got ${options.timeoutMs}): a longer timer fires after 1 ms`);
  }
  const ruleTimeoutMs = options.timeoutMs ?? DEFAULT_RULE_TIMEOUT_MS;
  if (options.callTimeoutMs !== undefined && options.callTimeoutMs >= ruleTimeoutMs) {
    throw new TypeError(`callTimeoutMs must be below timeoutMs (${ruleTimeoutMs} ms; got ${options.callTimeoutMs}): `
      + 'otherwise the rule fails as hung before a hung call is named');
  }
  const { only } = options;
  if (only !== undefined && typeof only !== 'function' && !(Array.isArray(only) && only.every((part) => typeof part === 'string'))) {
    throw new TypeError('only must be a list of strings (a rule runs when its name contains one) or a function of the rule name');
  }
  return options as unknown as StoreConformanceOptions;
}

/** The rules `options.only` selects: all without it; with a list, those whose name contains one of its strings. */
export function selectRules(rules: readonly ConformanceRule[], options: StoreConformanceOptions): readonly ConformanceRule[] {
  const { only } = options;
  if (only === undefined) return rules;
  const accepts = typeof only === 'function' ? only : (name: string) => only.some((part) => name.includes(part));
  return rules.filter((rule) => accepts(rule.name));
}
