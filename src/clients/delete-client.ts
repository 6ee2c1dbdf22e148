// Deletes an integration for good: its tokens are revoked first, then the record, codes and consents go.
import type { Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';
import { StoreCapabilityError, UnknownClientError } from './client-errors.js';

/**
 * Deletes an integration. In order: it is disabled (a request starting from now fails authentication), its
 * tokens are revoked with a tombstone (`revokeClientTokens`: no token request under way can save one after
 * it, and an integration later registered with the same client_id revives nothing), then the store's
 * `deleteClient` removes the record, its codes, consents and any token in one transaction (a store that
 * cannot reach codes and consents by integration, such as Redis, leaves them inert: see
 * `ClientStore.deleteClient`).
 * @throws UnknownClientError; StoreCapabilityError, before changing anything, when the store lacks the
 *   optional `deleteClient` (use `disableClient` there).
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §2 (client registration), §10.2.
 */
export async function deleteOAuthClient(store: Store, clientId: string): Promise<void> {
  const admin = requireAdministration(store, 'deleteClient');
  if (typeof admin.clients.deleteClient !== 'function') {
    throw new StoreCapabilityError('this store cannot delete integrations (it lacks store.clients.deleteClient): nothing was changed; disable the integration instead');
  }
  if (!(await admin.clients.updateClient(clientId, { disabled: true }))) throw new UnknownClientError(clientId);
  await admin.tokens.revokeClientTokens(clientId);
  if (!(await admin.clients.deleteClient(clientId))) throw new UnknownClientError(clientId);
}
