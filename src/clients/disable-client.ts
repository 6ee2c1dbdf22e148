// Disables an integration and revokes every token and code it holds.
import type { Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';
import { RevocationIncompleteError } from './client-errors.js';

/**
 * Disables an integration and revokes every token it holds and every code issued to it. The flag is written
 * first, so a request starting after the revocation's moment is refused at authentication; the store's
 * tombstone refuses any token a request that started before it would still save. Only the `disabled` field
 * is written (and, during a planned rotation's grace period, the previous secret removed, so that `enable`
 * brings back only the current secret), so a concurrent secret rotation cannot re-enable it.
 * @returns false for an unknown client_id.
 * @throws RevocationIncompleteError when the flag was written but the revocation failed.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.2.
 */
export async function disableClient(store: Store, clientId: string): Promise<boolean> {
  const admin = requireAdministration(store, 'disableClient');
  const current = await admin.clients.findClient(clientId);
  if (!current) return false;
  // A disable is often the answer to a leak: the previous secret of a planned rotation must not come back with
  // `enable`. Cleared only where there is one, so a contract-v1 store (no such fields) is written as before.
  const endGrace = current.previousClientSecretHash != null ? { previousClientSecretHash: null, previousClientSecretExpiresAt: null } : {};
  if (!(await admin.clients.updateClient(clientId, { disabled: true, ...endGrace }))) return false;
  // Disabled but not revoked is neither done nor undone: said so, and a second disable (or a revocation) ends it.
  try {
    await admin.tokens.revokeClientTokens(clientId);
  } catch (error) {
    throw new RevocationIncompleteError(clientId, null, error, `${JSON.stringify(clientId)} was disabled`);
  }
  return true;
}
