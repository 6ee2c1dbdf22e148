// Typed access to the optional parts of a store, for rules that only run when the store has them.
import type { AdministrationStore, ConsentStore, RateLimitStore, SigningKeyStore, Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';

/**
 * The store as an AdministrationStore (the runner skips administration rules for a store without the tier).
 * @throws TypeError naming the missing methods.
 * @see RFC 6749 §2 (client registration).
 */
export function administration(store: Store): AdministrationStore {
  return requireAdministration(store, 'the Store conformance suite');
}

/**
 * `store.tokens.revokeClientTokens`, bound (the runner skips its rules for a store without it).
 * @throws TypeError when the store lacks it.
 * @see RFC 7009 §2.1 (revocation).
 */
export function revokeClientTokensOf(store: Store): (clientId: string, userId?: string) => Promise<void> {
  const tokens = store.tokens;
  if (typeof tokens.revokeClientTokens !== 'function') throw new TypeError('the store lacks store.tokens.revokeClientTokens');
  return (clientId, userId) => (userId === undefined ? tokens.revokeClientTokens!(clientId) : tokens.revokeClientTokens!(clientId, userId));
}

/**
 * `store.consents` (the runner skips consent rules for a store without it).
 * @throws TypeError when the store lacks it.
 * @see RFC 6749 §4.1.1.
 */
export function consentsOf(store: Store): ConsentStore {
  if (!store.consents) throw new TypeError('the store lacks store.consents');
  return store.consents;
}

/**
 * `store.keys` (the runner skips signing-key rules for a store without it).
 * @throws TypeError when the store lacks it.
 * @see RFC 9068 §4.
 */
export function keysOf(store: Store): SigningKeyStore {
  if (!store.keys) throw new TypeError('the store lacks store.keys');
  return store.keys;
}

/**
 * `store.rateLimits` (the runner skips rate-limit rules for a store without it).
 * @throws TypeError when the store lacks it.
 * @see RFC 6819 §5.1.4.2.3.
 */
export function rateLimitsOf(store: Store): RateLimitStore {
  if (!store.rateLimits) throw new TypeError('the store lacks store.rateLimits');
  return store.rateLimits;
}
