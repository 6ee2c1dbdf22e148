// Disables an integration and revokes every token and code it holds.
import type { DisableClientOutcome, Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';
import { DISABLE_CLIENT_CHANGES } from '../stores/store-policy.js';
import { RevocationIncompleteError } from './client-errors.js';

/**
 * The first step of a disable: writes the flag (and, during a planned rotation's grace period, removes the previous
 * secret, so that `enable` brings back only the current one) and says whether this call is the one that disabled
 * it. With the store's `disableClient` that is one atomic step, so of concurrent disables from any number of
 * instances exactly one resolves `'disabled'`; a store without it (written before it) is read first, then
 * written with `updateClient`, and two disables at once may both find it enabled.
 * @returns null for an unknown client_id.
 * @see RFC 7009 §2.1, RFC 6749 §2.3.1, RFC 6819 §5.2.3.7.
 */
export async function markClientDisabled(store: Store, clientId: string): Promise<DisableClientOutcome | null> {
  const admin = requireAdministration(store, 'disableClient');
  if (typeof admin.clients.disableClient === 'function') return admin.clients.disableClient(clientId);
  const current = await admin.clients.findClient(clientId);
  if (!current) return null;
  // Cleared only where there is one, so a contract-v1 store (no such fields) is written as before.
  const changes = current.previousClientSecretHash != null ? DISABLE_CLIENT_CHANGES : { disabled: true };
  if (!(await admin.clients.updateClient(clientId, changes))) return null;
  return current.disabled ? 'already_disabled' : 'disabled';
}

/**
 * The second step: revokes every token and code of a disabled integration. Done again by every disable, so a
 * second one finishes a revocation the first left incomplete.
 * @throws RevocationIncompleteError when the revocation failed (the flag stays written).
 * @see RFC 7009 §2.1.
 */
export async function revokeDisabledClientTokens(store: Store, clientId: string): Promise<void> {
  const admin = requireAdministration(store, 'disableClient');
  // Disabled but not revoked is neither done nor undone: said so, and a second disable (or a revocation) ends it.
  try {
    await admin.tokens.revokeClientTokens(clientId);
  } catch (error) {
    throw new RevocationIncompleteError(clientId, null, error, `${JSON.stringify(clientId)} was disabled`);
  }
}

/**
 * Disables an integration and revokes every token it holds and every code issued to it. The flag is written
 * first, so a request starting after the revocation's moment is refused at authentication; the store's
 * tombstone refuses any token a request that started before it would still save. Only the `disabled` field
 * is written (and, during a planned rotation's grace period, the previous secret removed, so that `enable`
 * brings back only the current secret), so a concurrent secret rotation cannot re-enable it. Disabling a disabled
 * integration revokes again and resolves true.
 * @returns false for an unknown client_id.
 * @throws RevocationIncompleteError when the flag was written but the revocation failed.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.2.
 */
export async function disableClient(store: Store, clientId: string): Promise<boolean> {
  if ((await markClientDisabled(store, clientId)) === null) return false;
  await revokeDisabledClientTokens(store, clientId);
  return true;
}
