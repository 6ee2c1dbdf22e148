// Counts through an express-rate-limit Store (the `loginRateLimit.store` option), as the rateLimits tier would.
import type { Options as ExpressRateLimitOptions, Store as ExpressRateLimitStore } from 'express-rate-limit';
import type { RateLimitStore } from '../stores/contract.js';
import { OptionsError } from '../options-error.js';

/**
 * Adapts an express-rate-limit (v7/v8) Store, e.g. rate-limit-redis, to the counters the sign-in limit uses:
 * `increment`, `decrement` and `resetKey` map onto `hit`, `release` and `reset`. Such a store has one window
 * for every key, set here through `init({ windowMs })`: the `windowMs` and `now` of each call are its own
 * business. `get` is never asked of it (the sign-in limit keeps its known sources in the Store's tier).
 * @throws OptionsError when the value lacks one of the three methods.
 * @see RFC 6819 §5.1.4.2.3 (lock accounts), RFC 6585 §4.
 */
export function countersFromExpressRateLimitStore(store: ExpressRateLimitStore, windowMs: number): RateLimitStore {
  for (const method of ['increment', 'decrement', 'resetKey'] as const) {
    if (typeof (store as Partial<ExpressRateLimitStore> | null)?.[method] !== 'function') {
      throw new OptionsError('loginRateLimit.store', `must be an express-rate-limit Store (it has no ${method}())`);
    }
  }
  // express-rate-limit itself does not await init either; a store that needs it finishes before first use.
  void Promise.resolve(store.init?.({ windowMs } as ExpressRateLimitOptions)).catch(() => undefined);
  const fallbackEnd = (now: Date): Date => new Date(now.getTime() + windowMs);
  return {
    async hit(key, _windowMs, now) {
      const { totalHits, resetTime } = await store.increment(key);
      return { count: totalHits, resetAt: resetTime ?? fallbackEnd(now) };
    },
    async get(key, now) {
      const info = await store.get?.(key);
      return info ? { count: info.totalHits, resetAt: info.resetTime ?? fallbackEnd(now) } : null;
    },
    async release(key) {
      await store.decrement(key);
    },
    async reset(key) {
      await store.resetKey(key);
    },
  };
}
