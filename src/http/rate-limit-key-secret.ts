// Which secret keys the rate-limit counters' keys: one every instance holds, so they keep counting together.
import type { ResolvedOptions } from '../options.js';
import type { RateLimitStore } from '../stores/contract.js';
import { isInProcessRateLimits } from '../stores/memory/rate-limits.js';

/**
 * The secret the counter keys are MACed under (`createCounterKey`): `rateLimitKeySecret` when given, else the
 * first `session.secret` (the one that signs new cookies; every instance must hold it for sessions to work, and
 * the MAC key is derived from it, never it), else null: unkeyed, as before. Changing it starts every counter
 * afresh, once.
 * @see RFC 6819 §5.1.4.2.3.
 */
export function rateLimitKeySecretOf(options: ResolvedOptions): string | null {
  if (options.rateLimitKeySecret !== undefined) return options.rateLimitKeySecret;
  const secret = options.session.secret;
  if (secret === undefined) return null;
  return typeof secret === 'string' ? secret : secret[0] ?? null;
}

/**
 * One start-up warning, under NODE_ENV=production only, when a limit counts under unkeyed keys in a store (`counters`
 * not in-process): the store, and any APM span of its calls, then holds a SHA-256 of each username and address that a
 * dictionary reverses. Counters in this process's memory (the memory store's, or the router's own when the store has
 * no rateLimits tier) hand their keys to nothing, so they get no warning. Not an error: a host whose own
 * express-session holds the sign-ins (`session.hostSession`) or whose own login page does (`currentUser`) has no
 * router secret, and refusing it would break an upgrade.
 */
export function warnUnkeyedCounterKeys(
  options: ResolvedOptions, secret: string | null, counters: RateLimitStore, nodeEnv = process.env.NODE_ENV,
): void {
  if (nodeEnv !== 'production' || secret !== null || (options.loginRateLimit === null && options.clientAuthRateLimit === null)) return;
  if (isInProcessRateLimits(counters)) return;
  options.logger.warn('express-oauth-router: no session.secret nor rateLimitKeySecret, so the rate-limit counters\' keys '
    + 'in the store are an unkeyed SHA-256 of the usernames and addresses they count, which a dictionary reverses. Set '
    + 'rateLimitKeySecret to a long random string, the same on every instance.');
}
