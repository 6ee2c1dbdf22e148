// The common first half of revocation and introspection: form, client authentication, the `token` field.
import type { Request } from 'express';
import type { OAuthClient, Store } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import { TOKEN_MANAGEMENT_PARAMETERS } from '../checks/parameter-label.js';
import { readForm } from '../http/read-form.js';
import { keepPeerAddress } from '../http/keep-peer-address.js';
import { authenticateClientAtIssuer, type ClientAuthEndpoint } from '../checks/client-at-issuer.js';
import type { ClientAuthRateLimit } from '../checks/client-auth-rate-limit.js';
import { InvalidRequestError } from '../errors.js';

/** An authenticated request about one token. */
export interface TokenRequest {
  readonly client: OAuthClient;
  readonly token: string;
  readonly hint: string | undefined;
}

/**
 * Reads a revocation or introspection request: both authenticate like the token endpoint and carry `token`
 * and an optional `token_type_hint`.
 * @throws InvalidRequestError, InvalidClientError.
 * @see RFC 7009 §2.1, RFC 7662 §2.1.
 */
export async function readTokenRequest(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, req: Request, endpoint: ClientAuthEndpoint,
  limit: ClientAuthRateLimit | null,
): Promise<TokenRequest> {
  keepPeerAddress(req, options.events, limit !== null);
  const params = await readForm(req, options.bodyTimeout, TOKEN_MANAGEMENT_PARAMETERS);
  const client = await authenticateClientAtIssuer(store, options, issuer, req, params, endpoint, limit);
  const token = params.get('token');
  if (token === undefined) throw new InvalidRequestError('missing required parameter: token');
  return { client, token, hint: params.get('token_type_hint') };
}
