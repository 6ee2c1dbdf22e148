// Limits failed client authentications per (client_id, source) and per source, so a stranger cannot lock a client out.
import type { Request } from 'express';
import type { RateLimitStore } from '../stores/contract.js';
import { InvalidClientError, TooManyAttemptsError } from '../errors.js';
import { limitOptionsObject, positiveCount } from '../http/rate-limit-options.js';
import { sourceOf, type CounterKey } from '../http/rate-limit-keys.js';
import type { UntrustedProxyWarning } from '../http/untrusted-proxy-warning.js';
import { createOneAtATime, TooManyWaitingError } from './one-at-a-time.js';

/** The `clientAuthRateLimit` option. Counts are failed client authentications per window. */
export interface ClientAuthRateLimitOptions {
  /** Failures allowed for one client_id from one source; then that source gets 429 for it. Default 20. */
  readonly max?: number;
  /** Failures allowed from one source whatever the client_id. Default 100. */
  readonly maxPerSource?: number;
  /** Window length, at most a day. Default 300 (5 minutes). */
  readonly windowSeconds?: number;
}

/** The `clientAuthRateLimit` option after defaults: `oauth.options.clientAuthRateLimit` (`null` when off). @see RFC 6819 §4.3.5. */
export interface ResolvedClientAuthRateLimit {
  readonly max: number;
  readonly maxPerSource: number;
  readonly windowSeconds: number;
}

const KEYS = ['max', 'maxPerSource', 'windowSeconds'] as const;

/**
 * Validates the option once, at start-up.
 * @throws OptionsError naming the bad key.
 * @see RFC 6819 §4.3.5.
 */
export function resolveClientAuthRateLimit(value: ClientAuthRateLimitOptions | false | undefined): ResolvedClientAuthRateLimit | null {
  if (value === false) return null;
  const options = limitOptionsObject('clientAuthRateLimit', value, KEYS);
  const count = (key: (typeof KEYS)[number], fallback: number, max?: number) => positiveCount('clientAuthRateLimit', key, options[key], fallback, max);
  return { max: count('max', 20), maxPerSource: count('maxPerSource', 100), windowSeconds: count('windowSeconds', 300, 86_400) };
}

/** Client authentication under the limit, handed by the router to the token, revocation and introspection endpoints. */
export interface ClientAuthRateLimit {
  /**
   * Runs `authenticate` unless this source is blocked, for the presented client_id or altogether; counts it
   * when it throws InvalidClientError for a presented client_id (`clientIdOf()` null: no credentials to count).
   * `clientIdOf` is called only when a block is remembered or a failure is counted, so the success path pays
   * neither a second credentials parse nor a key MAC. `otherIdOf`: a second client_id the request may authenticate
   * as (a Basic header's reading as sent, next to its form-decoded one), whose block refuses the request too.
   * @throws TooManyAttemptsError (429), or what `authenticate` throws.
   */
  authenticate<T>(req: Request, clientIdOf: () => string | null, authenticate: () => Promise<T>, otherIdOf?: () => string | null): Promise<T>;
  /**
   * Runs a slow secret check (scrypt, bcrypt: an imported secret) of `clientId` for this request when its source's
   * turn comes: one at a time per source, each refused at once (429) if the source became blocked meanwhile, and a
   * `final` mismatch counted before the next starts. So a burst of wrong secrets sent at once runs `max` checks
   * (`maxPerSource` across integrations), not one each. Only checks that start a new scrypt or bcrypt come here.
   * @throws TooManyAttemptsError (429).
   */
  slowCheck(req: Request, clientId: string, final: boolean, check: () => Promise<boolean>): Promise<boolean>;
}

/** Slow checks one source may have waiting for their turn; past it, 429 at once (a burst, not a client). */
const MAX_WAITING_SLOW_CHECKS = 200;

/** Blocked keys a process remembers before it forgets the oldest: an attacker's addresses cannot fill memory. */
const MAX_BLOCKED = 10_000;

/**
 * The client-authentication limit. Client secrets are 256-bit random values (RFC 6819 §5.1.4.2.2, high
 * entropy), which no online guessing finds, so the limit is about the flood and what it costs, and must
 * never become a way to lock an integration out (§5.1.4.2.3's caveat):
 * - only failures count, per (client_id, source), `max`, and per source, `maxPerSource`; there is no
 *   per-client_id count across sources, so a stranger's failures never reach the real client's other
 *   addresses, and a correct secret from a source that is not failing is never refused;
 * - the success path reads and writes no counter: a source is refused from this process's memory of the
 *   blocks it has seen. A failure counts in the Store's `rateLimits` tier when it has one (every instance
 *   counts together) and, reaching a limit, blocks the source here until the window ends; a count already
 *   past a limit (reached on another instance) answers 429 at once. So a source can have at most one
 *   failure per instance verified past the limit, and requests already in flight when a limit is reached
 *   still complete.
 * Keys come from `counterKey` (`createCounterKey`: a MAC under the instances' shared secret).
 * @see RFC 6819 §4.3.5 (online guessing of client secrets), §5.1.4.2.2, §5.1.4.2.3, RFC 6585 §4.
 */
export function createClientAuthRateLimit(
  resolved: ResolvedClientAuthRateLimit,
  counters: RateLimitStore,
  counterKey: CounterKey,
  warnProxy: UntrustedProxyWarning,
  clock: () => Date = () => new Date(),
): ClientAuthRateLimit {
  const windowMs = resolved.windowSeconds * 1000;
  /** Blocked key → end of its window (ms). Lazily expired; Map order is insertion order, oldest first. */
  const blocked = new Map<string, number>();
  /** The latest end of any block: past it, every block has ended and the map is emptied at once. */
  let lastBlockEnd = 0;

  function blockedUntil(key: string, now: number): number | null {
    const until = blocked.get(key);
    if (until === undefined) return null;
    if (until > now) return until;
    blocked.delete(key);
    return null;
  }

  function block(key: string, until: number, now: number): void {
    if (blocked.size >= MAX_BLOCKED) {
      for (const [old, end] of blocked) if (end <= now) blocked.delete(old);
      for (const old of blocked.keys()) {
        if (blocked.size < MAX_BLOCKED) break;
        blocked.delete(old);
      }
    }
    blocked.set(key, Math.max(until, blocked.get(key) ?? 0));
    lastBlockEnd = Math.max(lastBlockEnd, until);
  }

  /** Counts a failure of (clientId, this source) and of this source, blocking what reached its limit; resolves the
   * end of the latest block the count is past (the request is then refused with 429), or null. */
  async function countFailure(req: Request, clientId: string): Promise<number | null> {
    const now = clock();
    const at = now.getTime();
    const source = sourceOf(req);
    const sourceKey = counterKey('client-source', source);
    const pairKey = counterKey('client-pair', clientId, source);
    const [pair, bySource] = await Promise.all([counters.hit(pairKey, windowMs, now), counters.hit(sourceKey, windowMs, now)]);
    let past: number | null = null;
    for (const [key, count, max] of [[pairKey, pair, resolved.max], [sourceKey, bySource, resolved.maxPerSource]] as const) {
      if (count.count < max) continue;
      block(key, count.resetAt.getTime(), at);
      if (count.count > max) past = Math.max(past ?? 0, count.resetAt.getTime());
    }
    return past;
  }

  /** Slow checks take turns per source (see `slowCheck`). */
  const slowTurns = createOneAtATime(MAX_WAITING_SLOW_CHECKS);
  /** Requests whose failure a slow check's turn already counted, with what the count said. */
  const countedInTurn = new WeakMap<Request, number | null>();

  const refuse = (until: number, now: number): TooManyAttemptsError =>
    new TooManyAttemptsError('too many failed client authentications from this address; retry later', until - now);

  const limit: ClientAuthRateLimit = {
    async authenticate<T>(
      req: Request, clientIdOf: () => string | null, authenticate: () => Promise<T>, otherIdOf?: () => string | null,
    ): Promise<T> {
      warnProxy(req);
      // Nothing blocked in this process (the usual case): no key to build, nothing to look up.
      if (blocked.size > 0 && clock().getTime() >= lastBlockEnd) blocked.clear();
      if (blocked.size > 0) {
        const at = clock().getTime();
        const source = sourceOf(req);
        const pairBlock = (clientId: string | null | undefined): number | null =>
          (clientId == null ? null : blockedUntil(counterKey('client-pair', clientId, source), at));
        const until = blockedUntil(counterKey('client-source', source), at) ?? pairBlock(clientIdOf()) ?? pairBlock(otherIdOf?.());
        if (until !== null) throw refuse(until, at);
      }
      try {
        return await authenticate();
      } catch (err) {
        if (!(err instanceof InvalidClientError)) throw err;
        const clientId = clientIdOf();
        if (clientId === null) throw err;
        // A slow check's mismatch was counted in its turn (slowCheck); counting it again would block early.
        const counted = countedInTurn.get(req);
        const past = counted !== undefined ? counted : await countFailure(req, clientId);
        if (past !== null) throw refuse(past, clock().getTime());
        throw err;
      }
    },
    async slowCheck(req, clientId, final, check) {
      const source = sourceOf(req);
      const sourceKey = counterKey('client-source', source);
      let end: () => void;
      try {
        end = await slowTurns.turn(sourceKey);
      } catch (err) {
        if (!(err instanceof TooManyWaitingError)) throw err;
        throw new TooManyAttemptsError('too many client authentications at once from this address; retry later', 1000);
      }
      try {
        const at = clock().getTime();
        const until = blockedUntil(sourceKey, at) ?? blockedUntil(counterKey('client-pair', clientId, source), at);
        if (until !== null) throw refuse(until, at);
        const matches = await check();
        if (!matches && final) countedInTurn.set(req, await countFailure(req, clientId));
        return matches;
      } finally {
        end();
      }
    },
  };
  return limit;
}
