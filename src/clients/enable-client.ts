// Enables an integration again after `disableClient`: it may authenticate and obtain new tokens.
import type { Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';

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
  const admin = requireAdministration(store, 'enableClient');
  return (await admin.clients.updateClient(clientId, { disabled: false })) !== null;
}
