// Revokes every token of an integration, of a user at one integration, or of a user at every integration.
import type { Store } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';
import { STORE_POLICY, isStoreId } from '../stores/store-policy.js';
import { UnknownClientError } from './client-errors.js';

/** Whose tokens `revokeTokens` revokes: `clientId`, `userId`, or both; at least one. */
export interface RevokeTokensTarget {
  readonly clientId?: string;
  readonly userId?: string;
}

/** What `revokeTokens` revoked. */
export interface RevokedTokens {
  /** `client`: every token of one integration; `user`: a user's, at `clientIds` (one, or every integration). */
  readonly extent: 'client' | 'user';
  readonly userId: string | null;
  /** The integrations whose tokens were revoked. */
  readonly clientIds: readonly string[];
}

/**
 * Revokes access and refresh tokens, and voids codes issued before, by `revokeClientTokens`:
 * - `{ clientId }`: every token of the integration, client_credentials ones included;
 * - `{ clientId, userId }`: the user's tokens at that integration;
 * - `{ userId }`: the user's tokens at every integration. The store keeps tombstones per integration, so
 *   this is one `revokeClientTokens(clientId, userId)` per registered integration: a cost linear in the
 *   number of integrations (one store round trip, or transaction, each), fine for an admin action but not
 *   for a hot path. Integrations registered while it runs hold no token of the user worth revoking yet.
 * The integration stays enabled: its next request gets new tokens if its user authorizes again.
 * @throws UnknownClientError for a client_id no integration has; TypeError when neither id is given.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.4 (refresh tokens).
 */
export async function revokeTokens(store: Store, target: RevokeTokensTarget): Promise<RevokedTokens> {
  const admin = requireAdministration(store, 'revokeTokens');
  const { clientId, userId } = target;
  if (clientId === undefined && userId === undefined) throw new TypeError('give a clientId, a userId, or both');
  // No user the router signs in has any other id (UserAuth ids are store ids): a revocation under it would be
  // written at every integration and revoke nothing.
  if (userId !== undefined && !isStoreId(userId)) {
    throw new TypeError(`the user id must be 1 to ${STORE_POLICY.maxIdLength} characters without control characters`);
  }
  if (clientId !== undefined) {
    if (!(await admin.clients.findClient(clientId))) throw new UnknownClientError(clientId);
    await (userId === undefined ? admin.tokens.revokeClientTokens(clientId) : admin.tokens.revokeClientTokens(clientId, userId));
    return { extent: userId === undefined ? 'client' : 'user', userId: userId ?? null, clientIds: [clientId] };
  }
  const clientIds = (await admin.clients.listClients()).map((client) => client.clientId);
  for (const id of clientIds) await admin.tokens.revokeClientTokens(id, userId!);
  return { extent: 'user', userId: userId!, clientIds };
}
