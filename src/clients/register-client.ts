// Registers an integration: makes its id and secret, stores only the secret's hash.
import type { ClientFlow, OAuthClient, Store, TokenEndpointAuthMethod } from '../stores/contract.js';
import { createRandomToken } from '../crypto/random-token.js';
import { createRandomClientId } from '../crypto/random-client-id.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { checkRegisteredRedirectUri } from '../checks/registered-redirect-uri.js';
import { checkScopeTokens } from '../checks/scope.js';
import { CLIENT_AUTH_METHODS, isClientAuthMethod } from '../checks/client-auth-methods.js';
import { requireAdministration } from '../stores/check-store.js';
import { isStoreId } from '../stores/store-policy.js';

/** `registerClient` was given a client_id that is already registered. */
export class ClientExistsError extends Error {
  constructor(readonly clientId: string) {
    super('an integration with this client_id already exists');
    this.name = 'ClientExistsError';
  }
}

/** What to register. */
export interface RegisterClientInput {
  readonly name: string;
  readonly flow: ClientFlow;
  /** Required (at least one) for the authorization_code flow; must be empty for client_credentials. */
  readonly redirectUris?: readonly string[];
  readonly allowedScopes?: readonly string[];
  readonly requirePkce?: boolean;
  /** When the credentials count as issued (SPEC §9); not in the future. Default: now. */
  readonly credentialsIssuedAt?: Date;
  /**
   * A chosen client_id (an import, a fixed demo id); any store id is accepted, one starting with `-` too.
   * Default: 256 random bits, base64url, never starting with `-` (see `createRandomClientId`).
   */
  readonly clientId?: string;
  /**
   * The one way this integration may authenticate at the token, revocation and introspection endpoints
   * (RFC 7591 §2 `token_endpoint_auth_method`). Default: any method the server allows (`clientAuthMethods`).
   * A method the server does not allow locks the integration out, so keep the two consistent.
   */
  readonly tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
}

/** The registered integration and its secret, which exists only here: the store keeps its hash. */
export interface RegisteredClient {
  readonly client: OAuthClient;
  readonly clientSecret: string;
}

/**
 * Validates and saves a new integration with a 256-bit random client_id (never starting with `-`, so the
 * admin command can take it as printed) and client_secret.
 * @throws TypeError for a bad name, flow, redirect URI, scope or authentication method.
 * @see RFC 6749 §2 (client registration), §2.2 (client identifier), §2.3.1 (client password),
 *   §3.1.2.2 (registration requirements); RFC 7591 §2 (`token_endpoint_auth_method`).
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
  // A future issue date is a typo (2012 → 2021) that would silently pick the wrong base address (SPEC §9).
  if (issuedAt.getTime() > Date.now()) throw new TypeError('credentialsIssuedAt must not be in the future');
  if (input.clientId !== undefined && !isStoreId(input.clientId)) {
    throw new TypeError('clientId must be 1–255 characters without control characters');
  }
  const authMethod = input.tokenEndpointAuthMethod;
  if (authMethod !== undefined && !isClientAuthMethod(authMethod)) {
    throw new TypeError(`tokenEndpointAuthMethod must be one of ${CLIENT_AUTH_METHODS.join(', ')}`);
  }
  const clientSecret = createRandomToken();
  const client: OAuthClient = {
    clientId: input.clientId ?? createRandomClientId(),
    clientSecretHash: hashSecret(clientSecret),
    name,
    flow: input.flow,
    redirectUris,
    allowedScopes,
    requirePkce: input.requirePkce ?? false,
    credentialsIssuedAt: issuedAt,
    createdAt: new Date(),
    disabled: false,
    // Absent unless given: absence means every method the server allows.
    ...(authMethod === undefined ? {} : { tokenEndpointAuthMethod: authMethod }),
  };
  // createClient inserts only: a chosen id that exists is refused, never overwritten.
  if (!(await requireAdministration(store, 'registerClient').clients.createClient(client))) {
    throw new ClientExistsError(client.clientId);
  }
  return { client, clientSecret };
}
