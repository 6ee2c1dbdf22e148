// A deep copy of an integration record, for stores that hand out one row to several callers.
import type { OAuthClient } from './contract.js';

/**
 * An integration whose arrays and dates are its own, so a caller changing what a store gave it changes no
 * one else's answer (a store's kept copy, another call's answer).
 * @see src/stores/contract.ts ClientStore.findClient
 */
export function copyClient(client: OAuthClient): OAuthClient {
  return {
    ...client,
    redirectUris: [...client.redirectUris],
    allowedScopes: [...client.allowedScopes],
    credentialsIssuedAt: new Date(client.credentialsIssuedAt.getTime()),
    createdAt: new Date(client.createdAt.getTime()),
    ...(client.previousClientSecretExpiresAt
      ? { previousClientSecretExpiresAt: new Date(client.previousClientSecretExpiresAt.getTime()) }
      : {}),
  };
}
