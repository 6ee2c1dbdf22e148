// requireBearer's in-process cache of verified opaque tokens, exact because a revocation feed invalidates it.
import type { RevocationFeed, RevocationMark } from '../stores/contract.js';
import type { BearerAuth } from '../types.js';

/** The `bearerCache` router option. */
export type BearerCacheOption = boolean | { readonly maxEntries?: number };

/** Default bound: 10,000 entries of a few hundred bytes each, a few MB at most. */
export const DEFAULT_BEARER_CACHE_ENTRIES = 10_000;
const MAX_BEARER_CACHE_ENTRIES = 10_000_000;

/**
 * The cache's size from the `bearerCache` option: 0 (off), or its maximum number of entries.
 * @param fail throws an OptionsError for `bearerCache` with the problem.
 */
export function resolveBearerCacheSize(value: unknown, fail: (problem: string) => never): number {
  if (value === undefined || value === true) return DEFAULT_BEARER_CACHE_ENTRIES;
  if (value === false) return 0;
  if (typeof value !== 'object' || value === null || Object.keys(value).some((key) => key !== 'maxEntries')) {
    return fail('must be true, false or { maxEntries }');
  }
  const { maxEntries = DEFAULT_BEARER_CACHE_ENTRIES } = value as { maxEntries?: unknown };
  if (typeof maxEntries !== 'number' || !Number.isInteger(maxEntries) || maxEntries < 1 || maxEntries > MAX_BEARER_CACHE_ENTRIES) {
    return fail(`maxEntries must be an integer from 1 to ${MAX_BEARER_CACHE_ENTRIES}`);
  }
  return maxEntries;
}

interface Cached {
  readonly auth: BearerAuth;
  readonly expiresAtMs: number;
}

/** A cache of verified tokens by hash, valid only while the feed's mark has not moved. */
export interface BearerCache {
  /** The feed's mark now; take it BEFORE the lookup whose answer you may `put`. Also drops stale entries. */
  mark(): RevocationMark;
  /** The cached auth of a token verified since `mark` (taken this request), or `undefined`. */
  get(tokenHash: string, mark: RevocationMark, now: number): BearerAuth | undefined;
  /** Keeps a token verified by a lookup that began at `mark`, unless the feed moved meanwhile. */
  put(tokenHash: string, auth: BearerAuth, mark: RevocationMark): void;
}

/**
 * A bounded cache (oldest entry out first) that holds only entries verified under the feed's current mark:
 * when the mark moves (any revocation, anywhere the store reaches) or is `null` (the feed is unsure), the
 * whole cache is dropped and the next requests are looked up again. An entry is taken only if the mark read
 * before its lookup still holds after it, so a revocation racing the lookup is never hidden. Expiry is
 * honoured on every hit. Keys are token hashes: the cache never holds a bearer token itself. A `mark()` that
 * throws counts as `null` (every token looked up, never a cached one trusted) and is reported to `onFault`.
 * @see RFC 6750 §3.1 (`invalid_token` for a revoked token), RFC 7009 §2.1.
 */
export function createBearerCache(feed: RevocationFeed, maxEntries: number, onFault: (error: unknown) => void = () => {}): BearerCache {
  const entries = new Map<string, Cached>();
  let current: RevocationMark = null;

  /** The feed's mark; a feed that throws (a custom store's bug) vouches for nothing, as `null` does. */
  function read(): RevocationMark {
    try {
      return feed.mark();
    } catch (error) {
      onFault(error);
      return null;
    }
  }

  function mark(): RevocationMark {
    const now = read();
    if (now === null || now !== current) {
      entries.clear();
      current = now;
    }
    return now;
  }

  return {
    mark,
    get(tokenHash, at, now) {
      if (at === null || at !== current) return undefined;
      const cached = entries.get(tokenHash);
      if (cached === undefined) return undefined;
      if (cached.expiresAtMs <= now) {
        entries.delete(tokenHash);
        return undefined;
      }
      // A copy each time: a handler that edits req.auth must not change what the next request is given.
      return { ...cached.auth, scope: [...cached.auth.scope], expiresAt: new Date(cached.expiresAtMs) };
    },
    put(tokenHash, auth, at) {
      // The feed moved during the lookup: what the lookup saw may already be revoked.
      if (at === null || mark() !== at) return;
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(tokenHash, { auth: { ...auth, scope: [...auth.scope] }, expiresAtMs: auth.expiresAt.getTime() });
    },
  };
}
