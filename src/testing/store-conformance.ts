// The exported Store conformance suite: vitest tests that every built-in and custom Store must pass.
import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../stores/contract.js';
import { describeAbsentRules } from './conformance-absent.js';
import { describeClientRules } from './conformance-clients.js';
import { describeCodeRules } from './conformance-codes.js';
import { describeConsentRules } from './conformance-consents.js';
import { describeSigningKeyRules } from './conformance-keys.js';
import { describeTokenRules } from './conformance-tokens.js';

/** Options of `runStoreConformance`. @see RFC 6749 §4.1.2, §10.3–10.5 (what the suite holds a store to). */
export interface StoreConformanceOptions {
  /** Names the suite in the test report, e.g. `'sqlite'`. */
  readonly name: string;
  /**
   * Returns a fresh, empty store. Called before every test, so no test depends on another's data or
   * on the order in which they run.
   */
  createStore(): Promise<Store> | Store;
  /**
   * Called after every test with the store `createStore` returned, e.g. to close it and delete its
   * file or database. Default: `store.close?.()`. When given, it replaces the default, so close the
   * store here too.
   */
  destroyStore?(store: Store): Promise<void> | void;
}

/**
 * Registers, in the calling test file, the vitest tests that define a correct Store: unknown ids read as
 * `null`/`not_found` and never `undefined`; every field and Date round-trips; a record whose `expiresAt`
 * is past reads as absent (checked by saving already-expired records: no fake timers, so database-side
 * TTLs pass); of 20 concurrent `consumeCode` calls exactly one wins and the others report a replay;
 * `revokeGrant` removes a grant's tokens and makes `saveTokens` refuse it; revocation by token, client
 * and user removes exactly what it names; consents upsert and list in order; signing keys (only when the
 * store has the optional `keys` part) round-trip in order, are never replaced, and `onlyIfNone` lets
 * exactly one of N concurrent first starts insert.
 *
 * Each test is named after the rule it checks, so a failure reads as the broken rule.
 *
 * @example
 * ```ts
 * // test/my-store.test.ts
 * import { runStoreConformance } from 'express-oauth-router/testing';
 * runStoreConformance({
 *   name: 'my store',
 *   createStore: async () => createMyStore(await freshDatabase()),
 *   destroyStore: async (store) => { await store.close?.(); await dropDatabase(); },
 * });
 * ```
 * @see RFC 6749 §4.1.2 (single-use codes; replay revokes the grant's tokens), §10.3–10.5,
 * RFC 7009 §2.1 (revocation).
 */
export function runStoreConformance(options: StoreConformanceOptions): void {
  describe(`Store conformance: ${options.name}`, () => {
    let store: Store | null = null;

    beforeEach(async () => {
      store = await options.createStore();
    });

    afterEach(async () => {
      const current = store;
      store = null;
      if (!current) return;
      if (options.destroyStore) await options.destroyStore(current);
      else await current.close?.();
    });

    const getStore = (): Store => {
      if (!store) throw new Error('runStoreConformance: createStore() did not return a store');
      return store;
    };

    describeAbsentRules(getStore);
    describeClientRules(getStore);
    describeCodeRules(getStore);
    describeTokenRules(getStore);
    describeConsentRules(getStore);
    describeSigningKeyRules(getStore);
  });
}
