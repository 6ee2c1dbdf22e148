// Enables an integration again after `disableClient`: it may authenticate and obtain new tokens.
import type { EnableClientOutcome, Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';

/**
 * Clears the flag and says whether this call is the one that enabled it. With the store's `enableClient` that is one
 * atomic step, so of concurrent enables from any number of instances exactly one resolves `'enabled'`; a store without
 * it (written before it) is read first, then written with `updateClient`, and two enables at once may both find it
 * disabled.
 * @returns null for an unknown client_id.
 * @see RFC 6749 §2.3 (client authentication).
 */
export async function markClientEnabled(store: Store, clientId: string): Promise<EnableClientOutcome | null> {
  const admin = requireAdministration(store, 'enableClient');
  if (typeof admin.clients.enableClient === 'function') return admin.clients.enableClient(clientId);
  const current = await admin.clients.findClient(clientId);
  if (!current) return null;
  if (!(await admin.clients.updateClient(clientId, { disabled: false }))) return null;
  return current.disabled ? 'enabled' : 'already_enabled';
}

/**
 * Clears an integration's `disabled` flag, so it authenticates again with its current secret and can obtain
 * new tokens. Nothing revoked comes back: `disableClient` deleted the tokens and left a tombstone, so tokens,
 * refresh tokens and codes issued before the disable stay dead, and a token request that was under way
 * during the disable cannot save its tokens either. Only the `disabled` field is written, so a concurrent
 * secret rotation is kept. Enabling an enabled integration changes nothing.
 * @returns false for an unknown client_id.
 * @throws TypeError when the store lacks the `administration` tier.
 * @see RFC 7009 §2.1 (revoked tokens stay invalid), RFC 6749 §2.3 (client authentication).
 */
export async function enableClient(store: Store, clientId: string): Promise<boolean> {
  return (await markClientEnabled(store, clientId)) !== null;
}
