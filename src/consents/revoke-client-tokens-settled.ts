// Revokes an integration's tokens twice, a moment apart, so a token issued during the revocation dies too.
import { setTimeout as delay } from 'node:timers/promises';
import type { Store } from '../stores/contract.js';

/**
 * How long a token request that passed its checks (client enabled, consent present) just before a disable or
 * a withdrawal can take to save its tokens. The second pass after it removes such a token.
 */
const SETTLE_MS = 500;

/**
 * `revokeClientTokens`, then again after a short settle time. A token request that authenticated the client
 * (or redeemed a code under the consent) before the change but saves its tokens after the first pass would
 * otherwise keep a live token: `revokeClientTokens` leaves no tombstone. The change (disabled flag, deleted
 * consent) is written before the first pass, so requests starting later are refused by their own checks.
 * @see RFC 7009 §2.1 (revocation takes effect), RFC 6749 §10.2.
 */
export async function revokeClientTokensSettled(store: Store, clientId: string, userId?: string): Promise<void> {
  await store.tokens.revokeClientTokens(clientId, userId);
  await delay(SETTLE_MS);
  await store.tokens.revokeClientTokens(clientId, userId);
}
