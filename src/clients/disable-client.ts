// Disables an integration and revokes every token and code it holds.
import type { Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';

/**
 * Disables an integration and revokes every token it holds and every code issued to it. The flag is written
 * first, so a request starting after the revocation's moment is refused at authentication; the store's
 * tombstone refuses any token a request that started before it would still save. Only the `disabled` field
 * is written, so a concurrent secret rotation cannot re-enable it.
 * @returns false for an unknown client_id.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.2.
 */
export async function disableClient(store: Store, clientId: string): Promise<boolean> {
  const admin = requireAdministration(store, 'disableClient');
  if (!(await admin.clients.updateClient(clientId, { disabled: true }))) return false;
  await admin.tokens.revokeClientTokens(clientId);
  return true;
}
