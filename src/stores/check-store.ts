// Fails fast at start-up when a Store lacks a method, instead of at the first request that needs it.
import type { Store } from './contract.js';

const REQUIRED: Record<keyof Omit<Store, 'close' | 'keys'>, readonly string[]> = {
  clients: ['findClient', 'saveClient', 'listClients'],
  codes: ['saveCode', 'consumeCode'],
  tokens: ['saveTokens', 'findAccessToken', 'findRefreshToken', 'revokeAccessToken', 'revokeGrant', 'revokeClientTokens'],
  consents: ['findConsent', 'saveConsent', 'revokeConsent', 'listConsents'],
};

/**
 * @throws TypeError naming the first missing part or method (e.g. `store.codes.consumeCode`).
 */
export function checkStore(store: Store): void {
  if (store === null || typeof store !== 'object') throw new TypeError('express-oauth-router: store must be an object');
  for (const [part, methods] of Object.entries(REQUIRED)) {
    const section = (store as unknown as Record<string, Record<string, unknown> | undefined>)[part];
    for (const method of methods) {
      if (typeof section?.[method] !== 'function') {
        throw new TypeError(`express-oauth-router: store.${part}.${method} must be a function (see Store in stores/contract)`);
      }
    }
  }
}
