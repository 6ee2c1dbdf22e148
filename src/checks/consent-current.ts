// Whether a stored consent was given to the integration as it exists now, not to a deleted one of the same id.
import type { ConsentRecord, OAuthClient } from '../stores/contract.js';

/**
 * A consent counts only for the integration it was given to: one granted before the integration's
 * `createdAt` belongs to an earlier integration deleted under the same client_id (a store that cannot find
 * consents by integration, such as Redis, leaves them behind on delete), so the user must be asked again,
 * and the connected-applications page does not list it. `createdAt` is the moment the record was created
 * in this store (registration and import both set it; an import's original date is `credentialsIssuedAt`).
 * Clock skew between the process that created the integration and the one that saved the consent can only
 * make a fresh consent not count (the user is asked once more), never make an old one count again.
 * @see RFC 6749 §4.1.1 and §10.2 (the resource owner approves this client), RFC 6819 §5.2.3.3.
 */
export function isConsentCurrent(consent: ConsentRecord, client: OAuthClient): boolean {
  return consent.grantedAt.getTime() >= client.createdAt.getTime();
}
