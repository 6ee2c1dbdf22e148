// One call of every method a store has, with unknown ids or fresh records: for the absent and outage rules.
import type { Store } from '../stores/contract.js';
import { buildClient, buildCode, buildConsent, buildKey, buildToken, saveTokens } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';

/**
 * `[name, start]` for every method the store has (optional tiers only when present). Nothing is called until
 * `start` is: the absent rule checks each answers with a promise, the outage rule that each rejects as it should.
 * @see RFC 6749 §5.2 (`temporarily_unavailable`), RFC 9110 §15.6.4.
 */
export function everyMethodCall(store: Store): [string, () => Promise<unknown>][] {
  const { clients, codes, tokens, consents, keys, rateLimits } = store;
  const calls: [string, () => Promise<unknown>][] = [
    ['clients.findClient', () => clients.findClient(freshId())],
    ['codes.saveCode', () => codes.saveCode(buildCode())],
    ['codes.consumeCode', () => codes.consumeCode(freshId())],
    ['tokens.saveTokens', () => saveTokens(store, buildToken(), null)],
    ['tokens.findAccessToken', () => tokens.findAccessToken(freshId())],
    ['tokens.findRefreshToken', () => tokens.findRefreshToken(freshId())],
    ['tokens.revokeAccessToken', () => tokens.revokeAccessToken(freshId())],
    ['tokens.revokeGrant', () => tokens.revokeGrant(freshId())],
  ];
  if (clients.createClient) calls.push(['clients.createClient', () => clients.createClient!(buildClient().client)]);
  if (clients.updateClient) calls.push(['clients.updateClient', () => clients.updateClient!(freshId(), { disabled: true })]);
  if (clients.listClients) calls.push(['clients.listClients', () => clients.listClients!()]);
  if (tokens.revokeClientTokens) calls.push(['tokens.revokeClientTokens', () => tokens.revokeClientTokens!(freshId(), freshId())]);
  if (consents) {
    calls.push(
      ['consents.findConsent', () => consents.findConsent(freshId(), freshId())],
      ['consents.saveConsent', () => consents.saveConsent(buildConsent())],
      ['consents.revokeConsent', () => consents.revokeConsent(freshId(), freshId())],
      ['consents.listConsents', () => consents.listConsents(freshId())],
    );
  }
  if (keys) calls.push(['keys.listSigningKeys', () => keys.listSigningKeys()], ['keys.saveSigningKey', () => keys.saveSigningKey(buildKey())]);
  if (rateLimits) {
    const key = `eor:test:${freshId()}`;
    calls.push(
      ['rateLimits.hit', () => rateLimits.hit(key, 60_000, new Date())],
      ['rateLimits.get', () => rateLimits.get(freshId(), new Date())],
      ['rateLimits.release', () => rateLimits.release(freshId(), new Date())],
      ['rateLimits.reset', () => rateLimits.reset(freshId())],
    );
  }
  if (typeof store.backendTime === 'function') calls.push(['backendTime', () => store.backendTime!()]);
  return calls;
}
