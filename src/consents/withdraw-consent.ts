// Withdraws a user's consent for an integration and revokes what it granted.
import type { Store } from '../stores/contract.js';
import { requireConsents } from '../stores/check-store.js';
import { isStoreId } from '../stores/store-policy.js';
import type { OAuthEvents } from '../events/oauth-events.js';

/** Where a withdrawal is reported, and from where it came (`null`s off HTTP). */
export interface WithdrawalAudit {
  readonly events: OAuthEvents;
  readonly issuer: string | null;
  readonly ip: string | null;
}

/**
 * Removes the consent of `userId` for `clientId`, then revokes every token that integration holds for the
 * user. The consent goes first, so a request starting after the revocation's moment finds no consent; the
 * store's tombstone refuses any token a request that started before it would still save, and voids every
 * code issued before it: the withdrawal is complete when the promise resolves, with no second pass. With
 * `audit`, it is then reported as `consent.withdrawn` and `token.revoked` (extent `user`), on every call: the
 * store does not say whether there was a consent to withdraw.
 * @throws TypeError when the store lacks the `consents` tier, or for an id no store can hold (`isStoreId`).
 * @see RFC 6749 §10.2 (the user stays in control of access granted), RFC 7009 §2.1 (grant-wide revocation).
 */
export async function withdrawConsent(store: Store, userId: string, clientId: string, audit?: WithdrawalAudit): Promise<void> {
  const consenting = requireConsents(store, 'withdrawConsent');
  if (!isStoreId(userId) || !isStoreId(clientId)) {
    throw new TypeError('withdrawConsent: userId and clientId must be 1-255 characters without control characters');
  }
  await consenting.consents.revokeConsent(userId, clientId);
  await consenting.tokens.revokeClientTokens(clientId, userId);
  if (!audit) return;
  const { events, issuer, ip } = audit;
  events.publish({ type: 'consent.withdrawn', time: new Date(), issuer, ip, userId, clientId });
  events.publish({
    type: 'token.revoked', time: new Date(), issuer, ip, cause: 'consent_withdrawn', extent: 'user', clientId, userId, grantId: null,
  });
}
