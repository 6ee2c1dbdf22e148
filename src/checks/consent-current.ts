// Whether a stored consent was given to the integration as it exists now, not to a deleted one of the same id.
import type { ConsentRecord, OAuthClient } from '../stores/contract.js';

/**
 * A consent counts only for the integration it was given to: one granted before the integration's
 * `createdAt` belongs to an earlier integration deleted under the same client_id (a store that cannot find
 * consents by integration, such as Redis, leaves them behind on delete), so the user must be asked again,
 * and the connected-applications page does not list it. `createdAt` is the moment the record was created
 * in this store (registration and import both set it; an import's original date is `credentialsIssuedAt`).
 * A consent granted in the very millisecond the integration was created does not count either: the old consent,
 * the delete and the new registration can all fall within one millisecond (a script deleting and re-creating an id
 * on a fast store), and the timestamps cannot tell that consent from one given to the new integration, so the tie
 * goes to asking again, as a tombstone refuses saves authorized in its millisecond. A user who approved within the
 * millisecond of creation is asked once more. Clock skew between the process that created the integration and the
 * one that saved the consent has the same two sides: a creating process behind by d ms lets a consent granted less
 * than d ms before its integration's deletion count again; keep the clocks in step (NTP).
 * @see RFC 6749 §4.1.1 and §10.2 (the resource owner approves this client), RFC 6819 §5.2.3.3.
 */
export function isConsentCurrent(consent: ConsentRecord, client: OAuthClient): boolean {
  return consent.grantedAt.getTime() > client.createdAt.getTime();
}
