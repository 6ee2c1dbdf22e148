// Client authentication plus the base-address rule, shared by the token, revocation and introspection endpoints.
import type { Request } from 'express';
import type { OAuthClient, Store, TokenEndpointAuthMethod } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { FormParams } from '../http/read-form.js';
import type { ClientAuthenticationFailedEvent, ClientAuthFailure } from '../events/event-types.js';
import { authenticateClient, parseBasicCredentials, readClientCredentials, type AuthenticatedClient, type SlowCheckGate } from './client-auth.js';
import type { ClientAuthRateLimit } from './client-auth-rate-limit.js';
import { issuerForClient, wrongAddressMessage } from './issuer.js';
import { InvalidClientError, TooManyAttemptsError } from '../errors.js';
import { singleAuthorizationHeader } from '../http/authorization-header.js';
import { isStoreId } from '../stores/store-policy.js';

/** Which endpoint authenticates the client, as the audit events name it. */
export type ClientAuthEndpoint = ClientAuthenticationFailedEvent['endpoint'];

/**
 * Authenticates the client with one of the methods the server allows (`clientAuthMethods`: HTTP Basic,
 * form fields), then checks it uses its own base address. Only once the secret
 * checked out may the answer name the right address (DESIGN §5), so a wrong secret learns nothing.
 * A failure is reported as a `client.authentication_failed` event (with its reason, which the answer never
 * tells), a refusal by `clientAuthRateLimit` as `rate_limit.hit`; the answers stay as they are.
 * @throws InvalidClientError, InvalidRequestError (also for two Authorization headers), TooManyAttemptsError
 *   (429, `clientAuthRateLimit`).
 * @see RFC 6749 §2.3.1, §5.2; RFC 7009 §2.1; RFC 7662 §2.1; SPEC §9; RFC 9700 §4.14 (audit).
 */
export async function authenticateClientAtIssuer(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, req: Request, params: FormParams, endpoint: ClientAuthEndpoint,
  limit: ClientAuthRateLimit | null,
): Promise<OAuthClient> {
  return (await authenticateAtIssuer(store, options, issuer, req, params, endpoint, limit, false)).client;
}

/**
 * `authenticateClientAtIssuer`, which with `copies` may authenticate from the store's copy of the integration
 * (`Store.clientCopies`) and then says which revision it was, for the tokens' save to check.
 * @see RFC 6749 §2.3.1, §5.2; SPEC §9.
 */
export async function authenticateAtIssuer(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, req: Request, params: FormParams, endpoint: ClientAuthEndpoint,
  limit: ClientAuthRateLimit | null, copies: boolean,
): Promise<AuthenticatedClient> {
  const authorization = singleAuthorizationHeader(req);
  const reportFailure = (err: unknown): never => {
    if (err instanceof InvalidClientError && options.events.active) {
      const presented = presentedClient(authorization, params);
      // A Basic header read two ways names the reading that was refused (client-auth.ts).
      const clientId = err.presentedClientId ?? presented.clientId;
      options.events.publish({
        type: 'client.authentication_failed', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, endpoint,
        clientId: NAMES_AN_INTEGRATION.has(err.reason) ? clientId : null, method: presented.method, reason: err.reason,
      });
    } else if (err instanceof TooManyAttemptsError && options.events.active) {
      // Refused before any lookup, so the id presented may be anything (a secret, swapped in): not reported.
      options.events.publish({
        type: 'rate_limit.hit', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, limit: 'client_authentication', clientId: null,
      });
    }
    throw err;
  };
  // Reported inside what the limit runs, so a failure that also reaches the limit is reported as both.
  // Under the limit, a slow secret check (an imported secret) waits its source's turn: see `slowCheck`.
  const gate: SlowCheckGate | undefined = limit ? (clientId, final, check) => limit.slowCheck(req, clientId, final, check) : undefined;
  // A 429 from the gate is reported once, below, with those of the limit itself.
  // The client_id a failure is counted against: the refused reading's, once one was refused (client-auth.ts).
  let refusedAs: string | undefined;
  const authenticate = () => authenticateClient(store, authorization, params, options.clientAuthMethods, copies, gate)
    .catch((err: unknown) => {
      if (err instanceof TooManyAttemptsError) return Promise.reject(err);
      if (err instanceof InvalidClientError) refusedAs = err.presentedClientId;
      return reportFailure(err);
    });
  // Under `clientAuthRateLimit`, failures are counted per presented client_id and source (none presented: none counted).
  const clientIdOf = () => refusedAs ?? presentedClientId(authorization, params, options);
  const authenticated = limit
    ? await limit.authenticate(req, clientIdOf, authenticate, () => literalClientId(authorization)).catch((err: unknown) => {
      if (err instanceof TooManyAttemptsError) reportFailure(err);
      throw err;
    })
    : await authenticate();
  const home = issuerForClient(options, authenticated.client);
  // DESIGN §5 names the right address only once the secret checks out: from a copy (which a disable or a rotated
  // secret may have left stale), only once the integration looked up authenticates the request too.
  if (home !== issuer && authenticated.revision !== undefined) {
    return authenticateAtIssuer(store, options, issuer, req, params, endpoint, limit, false);
  }
  if (home !== issuer) reportFailure(new InvalidClientError(wrongAddressMessage(options, home), 'wrong_issuer'));
  return authenticated;
}

/**
 * The failures whose presented client_id was found in the store. Any other id is not reported: a partner that
 * swaps its id and secret (`-u "$SECRET:$ID"`) presents its secret as the id, and events are logged as they are.
 */
const NAMES_AN_INTEGRATION: ReadonlySet<ClientAuthFailure> = new Set(['wrong_secret', 'disabled', 'method_not_allowed', 'wrong_issuer']);

/** The client_id of a Basic header's reading as sent, when it differs from its form-decoded one (client-auth.ts). */
function literalClientId(authorization: string | undefined): string | null {
  try {
    return parseBasicCredentials(authorization)?.literal?.clientId ?? null;
  } catch {
    return null;
  }
}

/** The client_id a request authenticates as, or null when its credentials are absent or malformed. */
function presentedClientId(authorization: string | undefined, params: FormParams, options: ResolvedOptions): string | null {
  try {
    return readClientCredentials(authorization, params, options.clientAuthMethods).clientId;
  } catch {
    return null;
  }
}

/**
 * What a failed attempt presented, for its event: the method by the shape of the request, and the client_id
 * when it is one a store could hold (never the secret, nor a malformed header, which may hold one).
 */
function presentedClient(
  authorization: string | undefined, params: FormParams,
): { clientId: string | null; method: TokenEndpointAuthMethod | null } {
  let clientId: unknown = null;
  let method: TokenEndpointAuthMethod | null = null;
  if (authorization !== undefined) {
    method = 'client_secret_basic';
    try {
      clientId = parseBasicCredentials(authorization)?.clientId ?? null;
    } catch {
      clientId = null;
    }
  } else {
    if (params.get('client_secret') !== undefined) method = 'client_secret_post';
    clientId = params.get('client_id') ?? null;
  }
  return { clientId: isStoreId(clientId) ? clientId : null, method };
}
