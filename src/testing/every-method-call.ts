// One call of every method a store has, with unknown ids or fresh records: for the absent and outage rules.
import type { Store } from '../stores/contract.js';
import { buildClient, buildCode, buildConsent, buildKey, buildToken, saveTokens } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';

/**
 * `[name, start]` for every async method of the contract the store has (optional tiers and optional methods, such as
 * `disableClient` or `replaceSigningKeys`, only when present). Nothing is called until `start` is: the absent rule
 * checks each answers with a promise, the outage rule that each rejects as it should. A method left out here is
 * checked by neither, so a store answering it with a raw driver error (a 500) or a hang during an outage would pass.
 * Not here: `revocations.mark` and `clientCopies.find` (synchronous, no I/O), `close`, and `checkReady` (which, by
 * the contract, reports what the probe read cannot see, so it may resolve while the backend is merely out).
 * Each rule runs on a fresh store, so `replaceSigningKeys` deleting every other key disturbs no other rule.
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
  if (clients.disableClient) calls.push(['clients.disableClient', () => clients.disableClient!(freshId())]);
  if (clients.enableClient) calls.push(['clients.enableClient', () => clients.enableClient!(freshId())]);
  if (clients.deleteClient) calls.push(['clients.deleteClient', () => clients.deleteClient!(freshId())]);
  if (tokens.revokeClientTokens) {
    // Both forms: a store may revoke a whole integration and one user at it by different statements or scripts.
    calls.push(
      ['tokens.revokeClientTokens(clientId)', () => tokens.revokeClientTokens!(freshId())],
      ['tokens.revokeClientTokens(clientId, userId)', () => tokens.revokeClientTokens!(freshId(), freshId())],
    );
  }
  if (consents) {
    calls.push(
      ['consents.findConsent', () => consents.findConsent(freshId(), freshId())],
      ['consents.saveConsent', () => consents.saveConsent(buildConsent())],
      ['consents.revokeConsent', () => consents.revokeConsent(freshId(), freshId())],
      ['consents.listConsents', () => consents.listConsents(freshId())],
    );
  }
  if (keys) {
    calls.push(
      ['keys.listSigningKeys', () => keys.listSigningKeys()],
      ['keys.saveSigningKey', () => keys.saveSigningKey(buildKey())],
      // Its own statement in most stores (an insert guarded by a count), so its own entry.
      ['keys.saveSigningKey(onlyIfNone)', () => keys.saveSigningKey(buildKey(), { onlyIfNone: true })],
    );
    if (keys.deleteSigningKey) calls.push(['keys.deleteSigningKey', () => keys.deleteSigningKey!(freshId())]);
    if (keys.replaceSigningKeys) calls.push(['keys.replaceSigningKeys', () => keys.replaceSigningKeys!(buildKey())]);
  }
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
