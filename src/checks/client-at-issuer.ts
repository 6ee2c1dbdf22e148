// Client authentication plus the base-address rule, shared by the token, revocation and introspection endpoints.
import type { Request } from 'express';
import type { OAuthClient, Store } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { FormParams } from '../http/read-form.js';
import { authenticateClient } from './client-auth.js';
import { issuerForClient, wrongAddressMessage } from './issuer.js';
import { InvalidClientError } from '../errors.js';

/**
 * Authenticates the client with one of the methods the server allows (`clientAuthMethods`: HTTP Basic,
 * form fields), then checks it uses its own base address. Only once the secret
 * checked out may the answer name the right address (DESIGN §5), so a wrong secret learns nothing.
 * @throws InvalidClientError, InvalidRequestError.
 * @see RFC 6749 §2.3.1, §5.2; RFC 7009 §2.1; RFC 7662 §2.1; SPEC §9.
 */
export async function authenticateClientAtIssuer(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, req: Request, params: FormParams,
): Promise<OAuthClient> {
  const client = await authenticateClient(store, req.headers.authorization, params, options.clientAuthMethods);
  const home = issuerForClient(options, client);
  if (home !== issuer) throw new InvalidClientError(wrongAddressMessage(options, home));
  return client;
}
