// In-process Store for tests and single-process demos: records kept as private copies, like a real database.
import type { AuthorizationCodeRecord, CompleteStore, ConsentRecord, ConsumeResult } from '../contract.js';
import { compareConsents } from '../store-policy.js';
import { decode, encode, isLive, nextTurn, pairKey, type Encoded } from './codec.js';
import { createMemoryClientStore } from './clients.js';
import { createMemoryKeyStore } from './keys.js';
import { createMemoryRateLimits } from './rate-limits.js';
import { createMemoryTokenStore } from './tokens.js';
import { startSweepLoop, SWEEP_BATCH } from '../sweep-loop.js';
import { checkTimerRange } from '../timer-range.js';
import { StoreUnavailableError } from '../store-unavailable-error.js';

/** Default seconds between sweeps of expired codes, tokens, tombstones and ended rate-limit windows. */
const DEFAULT_SWEEP_INTERVAL_SECONDS = 60;

/** Options of `createMemoryStore`. @see RFC 6749 §10.5 (codes are short-lived). */
export interface MemoryStoreOptions {
  /** Seconds between sweeps of expired records (in chunks of 1000 entries); `0` turns the timer off. Default 60. */
  readonly sweepIntervalSeconds?: number;
}

/** The memory store: every tier of the contract, `close()`, and a sweep on demand. @see RFC 7009 §2.1. */
export type MemoryStore = CompleteStore & {
  close(): Promise<void>;
  /** Runs a sweep of expired records now, in chunks like the timer's; resolves when it is done. */
  sweepExpired(): Promise<void>;
  /** Records held (codes, tokens and their grant index, tombstones, rate-limit windows), expired ones until swept. */
  recordCount(): number;
};

interface StoredCode {
  readonly record: AuthorizationCodeRecord;
  readonly consumedAt: number | null;
}

/**
 * Creates an independent in-memory Store. Nothing is shared between two calls and nothing survives the
 * process, so use it for tests and demos; use the SQLite store (one file) or PostgreSQL/Redis otherwise.
 *
 * Like express-session's MemoryStore, it keeps every record as a private copy (express-session's keeps JSON
 * text; a deep copy costs an eighth as much: 0.6 vs 5.1 µs per token record written and read) and answers
 * on a later event-loop turn, so code written against it does not come to depend on shared references or
 * on synchronous answers that a real database would not give.
 *
 * `consumeCode` checks and marks the code in one synchronous block: of N concurrent calls exactly one
 * wins (RFC 6749 §4.1.2, "MUST NOT use the authorization code more than once"). Consumed codes are kept
 * until they expire so that replays are reported; revocations are remembered for
 * `STORE_POLICY.revocationRetentionMs`; every revocation changes `revocations.mark()`, so `requireBearer`'s
 * cache drops what it verified before (the `revocationFeed` tier). Expired records read as absent at once and are swept by a timer
 * (every `sweepIntervalSeconds`, in chunks of 1000 entries between which requests run) that `close()` stops.
 *
 * @example
 * ```ts
 * import { createMemoryStore } from 'express-oauth-router/stores/memory';
 * const store = createMemoryStore();
 * ```
 * @see RFC 6749 §4.1.2 (single-use codes), §10.5 (codes), RFC 7009 §2.1 (revocation).
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const sweepSeconds = options.sweepIntervalSeconds ?? DEFAULT_SWEEP_INTERVAL_SECONDS;
  if (typeof sweepSeconds !== 'number' || !Number.isFinite(sweepSeconds) || sweepSeconds < 0) {
    throw new TypeError('createMemoryStore: sweepIntervalSeconds must be a number of seconds ≥ 0');
  }
  checkTimerRange('createMemoryStore: option "sweepIntervalSeconds"', sweepSeconds, 'seconds');
  const codes = new Map<string, Encoded>();
  const consents = new Map<string, Encoded>();
  let closed = false;

  /**
   * Every operation starts here: waits a turn, then refuses to run on a closed store, as the other stores do: a request
   * that reaches a router whose store was closed (a host shutting down) is answered 503, not a bug's 500.
   */
  async function ready(): Promise<void> {
    await nextTurn();
    if (closed) throw new StoreUnavailableError('memory store unavailable (closed)');
  }

  const tokenPart = createMemoryTokenStore(ready);
  const counters = createMemoryRateLimits(ready);

  function* sweep(now: number): Generator<void, void, unknown> {
    let seen = 0;
    for (const [hash, json] of codes) {
      if (!isLive(decode<StoredCode>(json).record.expiresAt, now)) codes.delete(hash);
      if (++seen % SWEEP_BATCH === 0) yield;
    }
    yield* tokenPart.sweep(now);
    yield* counters.sweepChunks(now);
  }

  // Chunks of SWEEP_BATCH entries with the event loop free between them; the timer is unref'd.
  const sweeper = startSweepLoop(sweep, sweepSeconds * 1000);

  return {
    clients: createMemoryClientStore(ready, (clientId) => {
      for (const [hash, json] of codes) if (decode<StoredCode>(json).record.clientId === clientId) codes.delete(hash);
      for (const [key, json] of consents) if (decode<ConsentRecord>(json).clientId === clientId) consents.delete(key);
      tokenPart.dropClient(clientId);
    }),

    codes: {
      async saveCode(record: AuthorizationCodeRecord): Promise<void> {
        await ready();
        codes.set(record.codeHash, encode({ record, consumedAt: null } satisfies StoredCode));
      },
      async consumeCode(codeHash: string): Promise<ConsumeResult<AuthorizationCodeRecord>> {
        await ready();
        // Check and mark in this one synchronous block, with no await in between: that is what makes
        // the consume atomic (the check-then-await-then-set race of oidc-provider's grant_common.js).
        const json = codes.get(codeHash);
        if (json === undefined) return { kind: 'not_found' };
        const stored = decode<StoredCode>(json);
        const now = Date.now();
        if (!isLive(stored.record.expiresAt, now)) {
          codes.delete(codeHash);
          return { kind: 'not_found' };
        }
        if (stored.consumedAt !== null) {
          return { kind: 'replayed', grantId: stored.record.grantId, userId: stored.record.userId, clientId: stored.record.clientId };
        }
        codes.set(codeHash, encode({ record: stored.record, consumedAt: now } satisfies StoredCode));
        return { kind: 'consumed', record: stored.record };
      },
    },

    tokens: tokenPart.tokens,

    // A closed store vouches for nothing: requireBearer then looks up, and the lookup fails as it should.
    revocations: { mark: () => (closed ? null : tokenPart.revocationCount()) },

    consents: {
      async findConsent(userId: string, clientId: string): Promise<ConsentRecord | null> {
        await ready();
        const json = consents.get(pairKey(userId, clientId));
        return json === undefined ? null : decode<ConsentRecord>(json);
      },
      async saveConsent(record: ConsentRecord): Promise<void> {
        await ready();
        consents.set(pairKey(record.userId, record.clientId), encode(record));
      },
      async revokeConsent(userId: string, clientId: string): Promise<void> {
        await ready();
        consents.delete(pairKey(userId, clientId));
      },
      async listConsents(userId: string): Promise<readonly ConsentRecord[]> {
        await ready();
        return [...consents.values()]
          .map((json) => decode<ConsentRecord>(json))
          .filter((consent) => consent.userId === userId)
          .sort(compareConsents);
      },
    },

    keys: createMemoryKeyStore(ready),

    rateLimits: counters.rateLimits,

    sweepExpired: () => sweeper.sweepNow(),
    recordCount: () => codes.size + tokenPart.recordCount() + counters.size(),

    async close(): Promise<void> {
      closed = true;
      await sweeper.stop();
    },
  };
}
