// Fails fast at start-up when a Store lacks a method an enabled feature needs, naming every one missing.
import type { AdministrationStore, ConsentsStore, Store, StoreTier } from './contract.js';

/**
 * The methods of each tier of the Store contract, by part. The parts are written out, not named by an alias of this
 * module, so a host's declarations that reach this type need nothing the package does not export.
 * @see DESIGN §2 (the Store is split by concern).
 */
export const STORE_TIERS: Readonly<Record<StoreTier, Readonly<Partial<Record<
  'clients' | 'codes' | 'tokens' | 'consents' | 'keys' | 'rateLimits' | 'revocations', readonly string[]
>>>>> = {
  required: {
    clients: ['findClient'],
    codes: ['saveCode', 'consumeCode'],
    tokens: ['saveTokens', 'findAccessToken', 'findRefreshToken', 'revokeAccessToken', 'revokeGrant'],
  },
  administration: {
    clients: ['createClient', 'updateClient', 'listClients'],
    tokens: ['revokeClientTokens'],
  },
  consents: {
    consents: ['findConsent', 'saveConsent', 'revokeConsent', 'listConsents'],
    tokens: ['revokeClientTokens'],
  },
  signingKeys: {
    keys: ['listSigningKeys', 'saveSigningKey'],
  },
  rateLimits: {
    rateLimits: ['hit', 'get', 'release', 'reset'],
  },
  revocationFeed: {
    revocations: ['mark'],
  },
};

/** The `store.part.method` names of a tier that the store lacks; empty when it has them all. */
export function missingStoreMethods(store: Store, tier: StoreTier): string[] {
  const missing: string[] = [];
  for (const [part, methods] of Object.entries(STORE_TIERS[tier])) {
    const section = (store as unknown as Record<string, Record<string, unknown> | undefined>)[part];
    for (const method of methods) {
      if (typeof section?.[method] !== 'function') missing.push(`store.${part}.${method}`);
    }
  }
  return missing;
}

/** Whether the store implements every method of the tier. */
export function hasStoreTier(store: Store, tier: 'administration'): store is AdministrationStore;
export function hasStoreTier(store: Store, tier: 'consents'): store is ConsentsStore;
export function hasStoreTier(store: Store, tier: StoreTier): boolean;
export function hasStoreTier(store: Store, tier: StoreTier): boolean {
  return missingStoreMethods(store, tier).length === 0;
}

/**
 * Checks the required tier and each tier in `tiers`, saying which feature needs a missing method.
 * @param tiers the tiers the enabled features need, each with the features that need it, e.g.
 *   `{ consents: 'rememberConsent and consentsPage (set both to false to run without)' }`.
 * @throws TypeError naming every missing method, e.g. `store.codes.consumeCode`.
 */
export function checkStore(store: Store, tiers: Partial<Record<Exclude<StoreTier, 'required'>, string>> = {}): void {
  if (store === null || typeof store !== 'object') throw new TypeError('express-oauth-router: store must be an object');
  const problems: string[] = [];
  const required = missingStoreMethods(store, 'required');
  if (required.length > 0) problems.push(`${required.join(', ')} (required)`);
  for (const [tier, neededBy] of Object.entries(tiers) as [StoreTier, string][]) {
    const missing = missingStoreMethods(store, tier);
    if (missing.length > 0) problems.push(`${missing.join(', ')} (tier "${tier}", needed by ${neededBy})`);
  }
  if (problems.length > 0) {
    throw new TypeError(`express-oauth-router: the store lacks ${problems.join('; ')}. See Store in stores/contract.`);
  }
}

/**
 * Returns the store as an AdministrationStore, or throws naming what it lacks.
 * @throws TypeError naming every missing method of the `administration` tier.
 */
export function requireAdministration(store: Store, feature: string): AdministrationStore {
  checkStore(store, { administration: feature });
  return store as AdministrationStore;
}

/**
 * Returns the store as a ConsentsStore, or throws naming what it lacks.
 * @throws TypeError naming every missing method of the `consents` tier.
 */
export function requireConsents(store: Store, feature: string): ConsentsStore {
  checkStore(store, { consents: feature });
  return store as ConsentsStore;
}
