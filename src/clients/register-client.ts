// Registers an integration: makes its id and secret, stores only the secret's hash.
import type { ClientFlow, OAuthClient, Store } from '../stores/contract.js';
import { createRandomToken } from '../crypto/random-token.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { checkRegisteredRedirectUri } from '../checks/registered-redirect-uri.js';
import { checkScopeTokens } from '../checks/scope.js';
import { revokeClientTokensSettled } from '../consents/revoke-client-tokens-settled.js';

/** What to register. */
export interface RegisterClientInput {
  readonly name: string;
  readonly flow: ClientFlow;
  /** Required (at least one) for the authorization_code flow; must be empty for client_credentials. */
  readonly redirectUris?: readonly string[];
  readonly allowedScopes?: readonly string[];
  readonly requirePkce?: boolean;
  /** When the credentials count as issued (SPEC §9). Default: now. */
  readonly credentialsIssuedAt?: Date;
}

/** The registered integration and its secret, which exists only here: the store keeps its hash. */
export interface RegisteredClient {
  readonly client: OAuthClient;
  readonly clientSecret: string;
}

/**
 * Validates and saves a new integration with a 256-bit random client_id and client_secret.
 * @throws TypeError for a bad name, flow, redirect URI or scope.
 * @see RFC 6749 §2 (client registration), §2.3.1 (client password), §3.1.2.2 (registration requirements).
 */
export async function registerClient(store: Store, input: RegisterClientInput): Promise<RegisteredClient> {
  const name = input.name?.trim();
  if (!name || name.length > 200) throw new TypeError('name must be 1–200 characters');
  if (input.flow !== 'authorization_code' && input.flow !== 'client_credentials') {
    throw new TypeError('flow must be authorization_code or client_credentials');
  }
  const redirectUris = [...new Set(input.redirectUris ?? [])];
  if (input.flow === 'authorization_code' && redirectUris.length === 0) {
    throw new TypeError('the authorization_code flow needs at least one redirect URI (RFC 6749 §3.1.2.2)');
  }
  if (input.flow === 'client_credentials' && redirectUris.length > 0) {
    throw new TypeError('the client_credentials flow has no redirect URI');
  }
  redirectUris.forEach(checkRegisteredRedirectUri);
  const allowedScopes = [...new Set(input.allowedScopes ?? [])];
  checkScopeTokens(allowedScopes);
  const issuedAt = input.credentialsIssuedAt ?? new Date();
  if (Number.isNaN(issuedAt.getTime())) throw new TypeError('credentialsIssuedAt must be a valid date');
  const clientSecret = createRandomToken();
  const client: OAuthClient = {
    clientId: createRandomToken(),
    clientSecretHash: hashSecret(clientSecret),
    name,
    flow: input.flow,
    redirectUris,
    allowedScopes,
    requirePkce: input.requirePkce ?? false,
    credentialsIssuedAt: issuedAt,
    createdAt: new Date(),
    disabled: false,
  };
  await store.clients.saveClient(client);
  return { client, clientSecret };
}

/**
 * Replaces an integration's secret; the old one stops working at once.
 * @returns the new secret, or `null` for an unknown client_id.
 */
export async function rotateClientSecret(store: Store, clientId: string): Promise<string | null> {
  const client = await store.clients.findClient(clientId);
  if (!client) return null;
  const clientSecret = createRandomToken();
  await store.clients.saveClient({ ...client, clientSecretHash: hashSecret(clientSecret) });
  return clientSecret;
}

/**
 * Disables an integration and revokes every token it holds (RFC 7009 §2.1 spirit: nothing outlives it).
 * @returns false for an unknown client_id.
 */
export async function disableClient(store: Store, clientId: string): Promise<boolean> {
  const client = await store.clients.findClient(clientId);
  if (!client) return false;
  await store.clients.saveClient({ ...client, disabled: true });
  await revokeClientTokensSettled(store, clientId);
  return true;
}
