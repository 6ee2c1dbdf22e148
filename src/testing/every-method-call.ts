// One call of every method a store has, with unknown ids or fresh records: for the absent and outage rules.
import type { Store, TokenRecord } from '../stores/contract.js';
import { buildClient, buildCode, buildConsent, buildKey, buildToken, buildTokenPair, saveTokens } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';

/** The tokens a `saveTokens` entry saves: the outage rule looks for them once the outage is over. */
export interface SavedTokens {
  readonly access: TokenRecord;
  readonly refresh: TokenRecord | null;
}

/** One entry: the name the rules report, the call (not started yet) and, for a `saveTokens` entry, what it saves. */
export type MethodCall = [name: string, start: () => Promise<unknown>, saves?: SavedTokens];

/**
 * `[name, start, saves?]` for every async method of the contract the store has (optional tiers and optional methods, such as
 * `disableClient` or `replaceSigningKeys`, only when present). Nothing is called until `start` is: the absent rule
 * checks each answers with a promise, the outage rule that each rejects as it should. A method left out here is
 * checked by neither, so a store answering it with a raw driver error (a 500) or a hang during an outage would pass.
 * Not here: `revocations.mark` and `clientCopies.find` (synchronous, no I/O), `close`, and `checkReady` (which, by
 * the contract, reports what the probe read cannot see, so it may resolve while the backend is merely out).
 * `saveTokens` has an entry per form the router calls it in: an access token alone, with a refresh token (the code
 * and refresh grants), and with `newGrant` (client_credentials). A store may save each by other statements (a grant
 * row, a second insert), so each must fail as an outage, and all or nothing: the outage rule checks afterwards that
 * none of their tokens was left behind, which a save that wrote its access token and then failed would leave.
 * Each rule runs on a fresh store, so `replaceSigningKeys` deleting every other key disturbs no other rule.
 * @see RFC 6749 §4.1.4, §4.4.3, §6 (the three forms), §5.2 (`temporarily_unavailable`), RFC 9110 §15.6.4.
 */
export function everyMethodCall(store: Store): MethodCall[] {
  const { clients, codes, tokens, consents, keys, rateLimits } = store;
  const alone: SavedTokens = { access: buildToken(), refresh: null };
  const paired: SavedTokens = buildTokenPair();
  // As client_credentials saves: an access token of a grant the request minted, no refresh token.
  const minted: SavedTokens = { access: buildToken({ userId: null }), refresh: null };
  const calls: MethodCall[] = [
    ['clients.findClient', () => clients.findClient(freshId())],
    ['codes.saveCode', () => codes.saveCode(buildCode())],
    ['codes.consumeCode', () => codes.consumeCode(freshId())],
    ['tokens.saveTokens', () => saveTokens(store, alone.access, null), alone],
    ['tokens.saveTokens(refresh)', () => saveTokens(store, paired.access, paired.refresh), paired],
    ['tokens.saveTokens(newGrant)', () => tokens.saveTokens(minted.access, null, { authorizedAt: new Date(), newGrant: true }), minted],
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
