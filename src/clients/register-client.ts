// Registers an integration: makes its id and secret, stores only the secret's hash.
import type { ClientFlow, OAuthClient, Store, TokenEndpointAuthMethod } from '../stores/contract.js';
import { createRandomToken } from '../crypto/random-token.js';
import { createRandomClientId } from '../crypto/random-client-id.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { checkClientAuthMethod, checkClientName, checkClientRedirectUris, checkClientRequirePkce, checkClientScopes } from './client-fields.js';
import { requireAdministration } from '../stores/check-store.js';
import { isClientId } from '../checks/client-id.js';

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
   * A chosen client_id (an import, a fixed demo id): 1–255 VSCHAR (%x20-7E, RFC 6749 Appendix A.1), one starting
   * with `-` too; a control or non-ASCII character is refused (`isClientId`).
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

/** What registration checks against, beyond the rules every registration follows. */
export interface RegistrationOptions {
  /**
   * The server's scope vocabulary (the keys of the router's `scopes` option): given and not empty, a scope outside it
   * is refused (`UnknownScopeError`), since the router would never grant it. Absent or empty: any scope-token, as
   * before (the caller may not know the router's options: a script in another process).
   * @see RFC 7591 §3.2.2 (`invalid_client_metadata`).
   */
  readonly scopes?: readonly string[];
}

/** The registered integration and its secret, which exists only here: the store keeps its hash. */
export interface RegisteredClient {
  readonly client: OAuthClient;
  readonly clientSecret: string;
}

/**
 * Validates a registration and builds the record `registerClient` would save, without saving it: the one
 * place the rules of registration live (an import checks every row with it before writing any).
 * @param clientSecretHash the stored form of the secret (`hashSecret`, or an imported hash format).
 * @param options the vocabulary the scopes are checked against (`RegistrationOptions`).
 * @throws TypeError for a bad name, flow, redirect URI, scope, PKCE setting, date, client_id or authentication method;
 *   UnknownScopeError (a TypeError) for a scope outside the vocabulary.
 * @see RFC 6749 §2 (client registration), §2.2 (client identifier), §3.1.2.2 (registration requirements),
 *   Appendix A.1 (client_id is VSCHAR); RFC 7591 §2 (`token_endpoint_auth_method`); SPEC §9 (issue date).
 */
export function buildClientRecord(input: RegisterClientInput, clientSecretHash: string, options: RegistrationOptions = {}): OAuthClient {
  const name = checkClientName(input.name);
  if (input.flow !== 'authorization_code' && input.flow !== 'client_credentials') {
    throw new TypeError('flow must be authorization_code or client_credentials');
  }
  const redirectUris = checkClientRedirectUris(input.flow, input.redirectUris);
  const allowedScopes = checkClientScopes(input.allowedScopes, options.scopes);
  const requirePkce = checkClientRequirePkce(input.flow, input.requirePkce);
  const issuedAt = input.credentialsIssuedAt ?? new Date();
  if (Number.isNaN(issuedAt.getTime())) throw new TypeError('credentialsIssuedAt must be a valid date');
  // A future issue date is a typo (2012 → 2021) that would silently pick the wrong base address (SPEC §9).
  if (issuedAt.getTime() > Date.now()) throw new TypeError('credentialsIssuedAt must not be in the future');
  if (input.clientId !== undefined && !isClientId(input.clientId)) {
    throw new TypeError('clientId must be 1–255 characters from %x20-7E (printable ASCII and space: RFC 6749 Appendix A.1 VSCHAR)');
  }
  const authMethod = checkClientAuthMethod(input.tokenEndpointAuthMethod);
  return {
    clientId: input.clientId ?? createRandomClientId(),
    clientSecretHash,
    name,
    flow: input.flow,
    redirectUris,
    allowedScopes,
    requirePkce,
    credentialsIssuedAt: issuedAt,
    createdAt: new Date(),
    disabled: false,
    // Absent unless given: absence means every method the server allows.
    ...(authMethod === undefined ? {} : { tokenEndpointAuthMethod: authMethod }),
  };
}

/**
 * Validates and saves a new integration with a 256-bit random client_id (never starting with `-`, so the
 * admin command can take it as printed) and client_secret.
 * @throws TypeError for a bad name, flow, redirect URI, scope or authentication method; UnknownScopeError (a
 *   TypeError) for a scope outside `options.scopes`.
 * @see RFC 6749 §2 (client registration), §2.2 (client identifier), §2.3.1 (client password),
 *   §3.1.2.2 (registration requirements); RFC 7591 §2 (`token_endpoint_auth_method`), §3.2.2.
 */
export async function registerClient(store: Store, input: RegisterClientInput, options: RegistrationOptions = {}): Promise<RegisteredClient> {
  const clientSecret = createRandomToken();
  const client = buildClientRecord(input, hashSecret(clientSecret), options);
  // createClient inserts only: a chosen id that exists is refused, never overwritten.
  if (!(await requireAdministration(store, 'registerClient').clients.createClient(client))) {
    throw new ClientExistsError(client.clientId);
  }
  return { client, clientSecret };
}
