// Limits failed sign-ins per account and per source, so passwords cannot be guessed at speed nor accounts locked by strangers.
import type { Request } from 'express';
import type { Store as ExpressRateLimitStore } from 'express-rate-limit';
import type { RateLimitCount, RateLimitStore } from '../stores/contract.js';
import { TooManyAttemptsError } from '../errors.js';
import { countersFromExpressRateLimitStore } from './express-rate-limit-counters.js';
import { limitOptionsObject, positiveCount } from './rate-limit-options.js';
import { accountOf, sourceOf, type CounterKey } from './rate-limit-keys.js';
import type { UntrustedProxyWarning } from './untrusted-proxy-warning.js';

/** The `loginRateLimit` option. Counts are failed sign-ins per window; a source is an address (`req.ip`). */
export interface LoginRateLimitOptions {
  /** Failures allowed for one account from one source; then that source gets 429 for it, right password or not. Default 10. */
  readonly max?: number;
  /** Failures allowed from one source across all accounts (password spraying). Default 30. */
  readonly maxPerSource?: number;
  /** Failures allowed for one account from all sources together (a distributed attack). Default 100. */
  readonly maxPerAccount?: number;
  /** Window length, at most a day. Default 900 (15 minutes). */
  readonly windowSeconds?: number;
  /** Days a source stays known for an account after a sign-in from it succeeded, at most 3650. Default 30. */
  readonly knownSourceDays?: number;
  /**
   * An express-rate-limit Store (e.g. rate-limit-redis) for the failure counters. Default: the Store's
   * `rateLimits` tier (shared by every instance on the store), else the process's memory.
   */
  readonly store?: ExpressRateLimitStore;
}

/** The `loginRateLimit` option after defaults: `oauth.options.loginRateLimit` (`null` when off). @see RFC 6819 §4.4.3.6. */
export interface ResolvedLoginRateLimit {
  readonly max: number;
  readonly maxPerSource: number;
  readonly maxPerAccount: number;
  readonly windowSeconds: number;
  readonly knownSourceDays: number;
  readonly store: ExpressRateLimitStore | undefined;
}

const KEYS = ['max', 'maxPerSource', 'maxPerAccount', 'windowSeconds', 'knownSourceDays', 'store'] as const;

/**
 * Validates the option once, at start-up.
 * @throws OptionsError naming the bad key.
 * @see RFC 6819 §4.4.3.6, §5.1.4.2.3.
 */
export function resolveLoginRateLimit(value: LoginRateLimitOptions | false | undefined): ResolvedLoginRateLimit | null {
  if (value === false) return null;
  const options = limitOptionsObject('loginRateLimit', value, KEYS);
  const count = (key: (typeof KEYS)[number], fallback: number, max?: number) => positiveCount('loginRateLimit', key, options[key], fallback, max);
  return {
    max: count('max', 10),
    maxPerSource: count('maxPerSource', 30),
    maxPerAccount: count('maxPerAccount', 100),
    windowSeconds: count('windowSeconds', 900, 86_400),
    knownSourceDays: count('knownSourceDays', 30, 3650),
    store: options.store,
  };
}

/** Runs credential checks under the limit. */
export interface LoginRateLimit {
  /**
   * Counts the attempt, then runs `verify` unless the limit refuses it. Resolves what `verify` resolves.
   * @throws TooManyAttemptsError (429) when refused; `verify` never ran.
   */
  attempt<T>(req: Request, username: string, verify: () => Promise<T | null>): Promise<T | null>;
}

/**
 * How a source stays known without its marker ever being removed and written again: a sign-in adds to the marker
 * of the current quarter of `knownSourceDays` (a counter that lives `knownSourceDays` from its first hit), and an
 * attempt reads the markers of the last four quarters. So a source is known for between three quarters of
 * `knownSourceDays` and all of it after its last sign-in, and a concurrent sign-in from it never finds it unknown,
 * as it did between a reset and the hit that followed (two round trips on PostgreSQL: a soak test saw 127 of
 * 5,577 correct sign-ins from a known address refused during a distributed attack).
 */
const KNOWN_PERIODS = 4;

/**
 * The sign-in limit. Three failure counters per window, after the OWASP Authentication Cheat Sheet (throttle
 * per account, and per source) and RFC 6819 §5.1.4.2.3 (lock accounts, noting that locking "can be abused to
 * lock down legitimate service users"):
 * - **(account, source)**, `max`: one source guessing one account. Past it that source is refused for that
 *   account, even the right password (otherwise a 429 would not end the guessing, only hide its result).
 * - **source**, `maxPerSource`: one source trying a few passwords on many accounts.
 * - **account**, `maxPerAccount`: many sources guessing one account.
 * The last two hold back only sources that are not *known* for the account (a successful sign-in from it in
 * the last `knownSourceDays`, to within a quarter of it): neither a stranger's failures on my account nor a crowd behind my office's
 * address keep me out from where I signed in before. A source new to the account is held back while the
 * account or the source is over its limit: that is what stops a distributed attack (RFC 6819 §4.4.3.6), and
 * the window ends it.
 *
 * Each attempt takes a place in all three counters before the password is checked (one atomic hit each, in
 * parallel), so N concurrent attempts cannot all slip under a limit; a refused attempt, and a successful one,
 * gives its places back (`release`), and a success clears its (account, source) counter. So the counts are
 * failed checks only, and one source hammering an account never adds to the account's count once refused.
 * Counters live in the Store's `rateLimits` tier when it has one (every instance counts together), else in
 * this process; `store` moves the failure counters to an express-rate-limit Store. Keys come from `counterKey`
 * (`createCounterKey`: a MAC under the instances' shared secret), so no store holds a username or address.
 * @see RFC 6819 §4.4.3.6, §5.1.4.2.3, RFC 6585 §4 (429), OWASP Authentication Cheat Sheet.
 */
export function createLoginRateLimit(
  resolved: ResolvedLoginRateLimit,
  counters: RateLimitStore,
  counterKey: CounterKey,
  warnProxy: UntrustedProxyWarning,
  clock: () => Date = () => new Date(),
): LoginRateLimit {
  const windowMs = resolved.windowSeconds * 1000;
  const knownMs = resolved.knownSourceDays * 24 * 3600 * 1000;
  const failures = resolved.store ? countersFromExpressRateLimitStore(resolved.store, windowMs) : counters;

  return {
    async attempt<T>(req: Request, username: string, verify: () => Promise<T | null>): Promise<T | null> {
      warnProxy(req);
      const now = clock();
      const account = accountOf(username);
      const source = sourceOf(req);
      const keys = [counterKey('login-pair', account, source), counterKey('login-source', source), counterKey('login-account', account)] as const;
      const period = Math.floor(now.getTime() / (knownMs / KNOWN_PERIODS));
      const knownKey = (n: number): string => counterKey('login-known', account, source, String(n));
      const [counts, markers] = await Promise.all([
        Promise.all(keys.map((key) => failures.hit(key, windowMs, now))),
        Promise.all(Array.from({ length: KNOWN_PERIODS }, (_, back) => counters.get(knownKey(period - back), now))),
      ]);
      const known = markers.some((marker) => marker !== null);
      const giveBack = (): Promise<unknown> => Promise.all(keys.map((key, i) => failures.release(key, counts[i]!.resetAt)));
      const [pair, bySource, byAccount] = counts as [RateLimitCount, RateLimitCount, RateLimitCount];
      const over = [
        pair.count > resolved.max ? pair : null,
        !known && bySource.count > resolved.maxPerSource ? bySource : null,
        !known && byAccount.count > resolved.maxPerAccount ? byAccount : null,
      ].filter((count): count is RateLimitCount => count !== null);
      if (over.length > 0) {
        await giveBack();
        const until = Math.max(...over.map((count) => count.resetAt.getTime()));
        throw new TooManyAttemptsError('too many failed sign-in attempts', until - now.getTime());
      }
      let user: T | null;
      try {
        user = await verify();
      } catch (err) {
        // The directory failed: no password was judged, so nothing is counted.
        await giveBack().catch(() => undefined);
        throw err;
      }
      // `== null`: a directory that answers undefined for a wrong password fails the same way.
      if (user == null) return null;
      await Promise.all([
        failures.reset(keys[0]),
        failures.release(keys[1], bySource.resetAt),
        failures.release(keys[2], byAccount.resetAt),
        // Known from now: this period's marker, added to, never removed (see KNOWN_PERIODS).
        counters.hit(knownKey(period), knownMs, now),
      ]);
      return user;
    },
  };
}
