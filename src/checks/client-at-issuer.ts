// Client authentication plus the base-address rule, shared by the token, revocation and introspection endpoints.
import type { Request } from 'express';
import type { OAuthClient, Store } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { FormParams } from '../http/read-form.js';
import { authenticateClient, readClientCredentials } from './client-auth.js';
import { clientAuthRateLimitOf } from './client-auth-rate-limit.js';
import { issuerForClient, wrongAddressMessage } from './issuer.js';
import { InvalidClientError } from '../errors.js';
import { singleAuthorizationHeader } from '../http/authorization-header.js';

/**
 * Authenticates the client with one of the methods the server allows (`clientAuthMethods`: HTTP Basic,
 * form fields), then checks it uses its own base address. Only once the secret
 * checked out may the answer name the right address (DESIGN §5), so a wrong secret learns nothing.
 * @throws InvalidClientError, InvalidRequestError (also for two Authorization headers), TooManyAttemptsError
 *   (429, `clientAuthRateLimit`).
 * @see RFC 6749 §2.3.1, §5.2; RFC 7009 §2.1; RFC 7662 §2.1; SPEC §9.
 */
export async function authenticateClientAtIssuer(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, req: Request, params: FormParams,
): Promise<OAuthClient> {
  const authorization = singleAuthorizationHeader(req);
  const authenticate = () => authenticateClient(store, authorization, params, options.clientAuthMethods);
  // Under `clientAuthRateLimit`, failures are counted per presented client_id and source (none presented: none counted).
  const limit = clientAuthRateLimitOf(req);
  const client = limit ? await limit.authenticate(req, () => presentedClientId(authorization, params, options), authenticate) : await authenticate();
  const home = issuerForClient(options, client);
  if (home !== issuer) throw new InvalidClientError(wrongAddressMessage(options, home));
  return client;
}

/** The client_id a request authenticates as, or null when its credentials are absent or malformed. */
function presentedClientId(authorization: string | undefined, params: FormParams, options: ResolvedOptions): string | null {
  try {
    return readClientCredentials(authorization, params, options.clientAuthMethods).clientId;
  } catch {
    return null;
  }
}
