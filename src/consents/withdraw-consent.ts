// Withdraws a user's consent for an integration and revokes what it granted.
import type { Store } from '../stores/contract.js';
import { revokeClientTokensSettled } from './revoke-client-tokens-settled.js';

/**
 * Removes the consent of `userId` for `clientId` and revokes every token that integration holds for the user,
 * so the next authorization request asks again and nothing issued before keeps working.
 * @see RFC 6749 §10.2 (the user stays in control of access granted), RFC 7009 §2.1 (grant-wide revocation).
 */
export async function withdrawConsent(store: Store, userId: string, clientId: string): Promise<void> {
  await store.consents.revokeConsent(userId, clientId);
  await revokeClientTokensSettled(store, clientId, userId);
}
