// In-process Store for tests and single-process demos: records kept as JSON strings, like a real database.
import type { AuthorizationCodeRecord, CompleteStore, ConsentRecord, ConsumeResult } from '../contract.js';
import { compareConsents } from '../store-policy.js';
import { decode, encode, isLive, nextTurn, pairKey } from './codec.js';
import { createMemoryClientStore } from './clients.js';
import { createMemoryKeyStore } from './keys.js';
import { createMemoryRateLimits } from './rate-limits.js';
import { createMemoryTokenStore } from './tokens.js';

/** How often the unref'd timer drops expired codes, tokens and tombstones. */
const SWEEP_INTERVAL_MS = 60_000;

interface StoredCode {
  readonly record: AuthorizationCodeRecord;
  readonly consumedAt: number | null;
}

/**
 * Creates an independent in-memory Store. Nothing is shared between two calls and nothing survives the
 * process, so use it for tests and demos; use the SQLite store (one file) or PostgreSQL/Redis otherwise.
 *
 * Like express-session's MemoryStore, it keeps every record as a JSON string and answers on a later
 * event-loop turn, so code written against it does not come to depend on shared references or on
 * synchronous answers that a real database would not give.
 *
 * `consumeCode` checks and marks the code in one synchronous block: of N concurrent calls exactly one
 * wins (RFC 6749 §4.1.2, "MUST NOT use the authorization code more than once"). Consumed codes are kept
 * until they expire so that replays are reported; revocations are remembered for
 * `STORE_POLICY.revocationRetentionMs`; every revocation changes `revocations.mark()`, so `requireBearer`'s
 * cache drops what it verified before (the `revocationFeed` tier). Expired records read as absent at once and are swept by a timer
 * that `close()` clears.
 *
 * @example
 * ```ts
 * import { createMemoryStore } from 'express-oauth-router/stores/memory';
 * const store = createMemoryStore();
 * ```
 * @see RFC 6749 §4.1.2 (single-use codes), §10.5 (codes), RFC 7009 §2.1 (revocation).
 */
export function createMemoryStore(): CompleteStore {
  const codes = new Map<string, string>();
  const consents = new Map<string, string>();
  let closed = false;

  /** Every operation starts here: waits a turn, then refuses to run on a closed store. */
  async function ready(): Promise<void> {
    await nextTurn();
    if (closed) throw new Error('the memory store is closed');
  }

  const tokenPart = createMemoryTokenStore(ready);
  const counters = createMemoryRateLimits(ready);

  function sweep(): void {
    const now = Date.now();
    for (const [hash, json] of codes) {
      if (!isLive(decode<StoredCode>(json).record.expiresAt, now)) codes.delete(hash);
    }
    tokenPart.sweep(now);
    counters.sweep(now);
  }

  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  // A store must never keep the process alive on its own.
  timer.unref();

  return {
    clients: createMemoryClientStore(ready),

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
        if (stored.consumedAt !== null) return { kind: 'replayed', grantId: stored.record.grantId };
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

    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
    },
  };
}
