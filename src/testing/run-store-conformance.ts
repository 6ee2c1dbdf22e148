// Registers the Store conformance rules as vitest tests, one per rule, grouped by tier.
import { describe, it, TestRunner } from 'vitest';
import type { Store, StoreTier } from '../stores/contract.js';
import type { StoreConformanceOptions } from './conformance-types.js';
import { checkConformanceOptions, selectRules, VITEST_MARGIN_MS } from './conformance-options.js';
import { CONFORMANCE_RULES, TIER_ORDER } from './conformance-rules.js';
import { OUTAGE_SKIPPED_NAME, OUTAGE_SKIPPED_REASON } from './conformance-outage.js';
import { DEFAULT_RULE_TIMEOUT_MS, PEER_SKIPPED_REASON, probeStore, runRule, skipReason, type StoreShape } from './run-rule.js';

interface SuiteLike {
  readonly mode?: string;
  readonly suite?: SuiteLike;
}

/** Whether the suite being collected sits inside a skipped one (`describe.skipIf(!url)`): then no store is made. */
function insideSkippedSuite(): boolean {
  const current = (TestRunner as unknown as { getCurrentSuite?: () => { suite?: SuiteLike } | undefined }).getCurrentSuite?.();
  for (let suite = current?.suite; suite; suite = suite.suite) if (suite.mode === 'skip' || suite.mode === 'todo') return true;
  return false;
}

/**
 * Registers, in the calling vitest file, one test per rule of the Store contract, named after the rule
 * and grouped by tier (`required`, `administration`, `consents`, `signingKeys`, `rateLimits`). Each test runs on a fresh
 * store from `createStore` and hands it to `destroyStore` afterwards. The same rules run without vitest
 * through `checkStoreConformance`.
 *
 * What the rule groups guard:
 * - **unknown ids**: `find*` resolve `null`, never `undefined`; `consumeCode` says `not_found`; every
 *   method answers with a promise. The router turns these into `invalid_client`/`invalid_grant`.
 * - **round trips and expiry**: every field and every Date (to the millisecond, `issuedAt` of codes
 *   included) comes back as saved; a record past its `expiresAt` reads as absent (checked by saving
 *   expired records: no fake timers, so database TTLs pass).
 * - **single use and revocation**: a code is consumed once, then replayed; `revokeGrant`,
 *   `revokeAccessToken` and `revokeClientTokens` remove exactly what they name.
 * - **tombstones**: after `revokeGrant`, no token of the grant can be saved again; after
 *   `revokeClientTokens(client[, user])`, `saveTokens` refuses tokens authorized at or before the revocation
 *   (and every grant whose refresh token it removed) and accepts those authorized after it.
 * - **integrations**: `createClient` never overwrites, `updateClient` changes exactly the given fields.
 * - **exact ids**: ids differing only in case or by a trailing space are other records, for integrations,
 *   codes, tokens, grants, consents and kids; ties in lists follow binary id order (`'B'` before `'a'`);
 *   ids of `STORE_POLICY.maxIdLength` characters and non-ASCII user ids round-trip. This catches SQL
 *   collations that fold case or pad spaces (the MySQL and MariaDB defaults).
 * - **races**: `saveTokens` against `revokeGrant`/`revokeClientTokens`, N × `consumeCode`, a disable against
 *   a secret rotation, N × `saveSigningKey({ onlyIfNone })` on an empty store, N × `replaceSigningKeys` (when the
 *   store has it: exactly one key left), 4 × `deleteSigningKey` of one kid (when the store has it), 4 ×
 *   `revokeAccessToken` of one token, 4 × `revokeGrant` of one grant (and of one holding no token), `revokeGrant` against a refresh
 *   (`saveTokens` of a new access token) of a grant that holds its tokens. Each runs `rounds` rounds
 *   through a sweep of interleavings (`RACE_SCHEDULES`: both orders, started in the same tick, or the second
 *   0 to 32 microtasks or 0 to 16 macrotasks after the first, then up to 256 macrotasks) and checks outcomes
 *   only, never durations. A store with an `await` or a round trip between a check and its write fails
 *   every run. With `openPeer`, each race also runs with its racers on two stores of one backend, so a store
 *   that is atomic only because its own process serialises its calls (a lock or queue in its code) fails too.
 * - **rate limits**: `hit` counts in fixed windows judged on the caller's `now` (a hit at or after `resetAt`
 *   starts again at 1), `get` counts nothing, `release` takes back one hit of its own window only, `reset`
 *   forgets; N concurrent hits on one key see 1..N exactly once.
 * - **outage** (with `simulateOutage` only): while the backend is out, every method rejects with
 *   `StoreUnavailableError` (the router answers 503, not 500), no failed `saveTokens` leaves a token behind, and the
 *   same store serves again afterwards.
 * - **hangs**: a store call that has not settled within `callTimeoutMs` fails its rule naming the method.
 *
 * Hooks an adapter author supplies:
 * - `createStore()`: a new, empty, independent store each call (own database, schema or key prefix); it is
 *   called once per rule, once to learn which tiers the store has (at collection), and once per round of
 *   the key race.
 * - `destroyStore(store)`: close it and drop what `createStore` made (default: `store.close?.()`).
 * - `simulateOutage(store)`: start an outage of that store's backend (e.g. a TCP proxy that drops
 *   connections), resolve once it is in effect, and resolve a function that ends it. Without it the outage
 *   rule is registered as skipped under a name that says so, and a warning is printed.
 * - `openPeer(store)`: a second store on that store's backend, as another instance opens it; enables the rules
 *   that revoke through it and watch the first store's revocation feed, and the races run across the two stores
 *   (skipped, saying so, without it, and a warning is printed: a store atomic only within one process passes
 *   every other rule).
 * Rules of a tier the store lacks are registered as skipped, with the missing methods in their name.
 *
 * @example
 * ```ts
 * // test/mariadb-store.test.ts
 * import { runStoreConformance } from 'express-oauth-router/testing';
 * runStoreConformance({
 *   name: 'mariadb',
 *   createStore: async () => createMariaDbStore({ database: await freshDatabase() }),
 *   destroyStore: async (store) => { await store.close?.(); await dropDatabase(); },
 *   simulateOutage: async () => { proxy.setMode('down'); return async () => proxy.setMode('up'); },
 * });
 * ```
 * @see RFC 6749 §4.1.2 (single-use codes; replay revokes the grant's tokens), §10.3–10.5,
 * RFC 7009 §2.1 (revocation), RFC 9068 §4 (signing keys).
 */
export function runStoreConformance<S extends Store>(typed: StoreConformanceOptions<S>): void {
  const options = checkConformanceOptions(typed);
  const rules = selectRules(CONFORMANCE_RULES, options);
  describe(`Store conformance: ${options.name}`, async () => {
    const skipped = insideSkippedSuite();
    // Which tiers the store has decides which rules are skipped, and their names: so look at one store now.
    // If createStore fails, every rule is registered and fails with that error.
    const shape: StoreShape | null = skipped ? null : await probeStore(options).catch(() => null);
    if (!skipped && !options.simulateOutage && rules.some((rule) => rule.needsOutageHook)) {
      console.warn(`Store conformance: ${options.name}: the outage rule is SKIPPED: ${OUTAGE_SKIPPED_REASON}. Supply simulateOutage.`);
    }
    if (!skipped && !options.openPeer && rules.some((rule) => rule.needsPeer)) {
      console.warn(`Store conformance: ${options.name}: the rules across instances are SKIPPED: ${PEER_SKIPPED_REASON}. Supply openPeer.`);
    }
    const timeout = (options.timeoutMs ?? DEFAULT_RULE_TIMEOUT_MS) + VITEST_MARGIN_MS;
    for (const tier of TIER_ORDER) registerTier(tier);

    function registerTier(tier: StoreTier): void {
      const ofTier = rules.filter((rule) => rule.tier === tier);
      if (ofTier.length === 0) return;
      describe(tier, () => {
        for (const rule of ofTier) {
          const reason = skipReason(rule, options, shape);
          if (reason === null) it(rule.name, () => runRule(rule, options), timeout);
          else if (rule.needsOutageHook) it.skip(OUTAGE_SKIPPED_NAME, () => undefined);
          else it.skip(`${rule.name} — SKIPPED: ${reason}`, () => undefined);
        }
      });
    }
  });
}
