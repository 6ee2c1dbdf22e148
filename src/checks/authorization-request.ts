// Validates GET /oauth2/authorize in the order RFC 6749 §4.1.2.1 requires: target first, then the rest.
import type { OAuthClient, Store } from '../stores/contract.js';
import { isStoreId } from '../stores/store-policy.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { PendingAuthorization } from '../http/oauth-session.js';
import { issuerForClient, wrongAddressMessage } from './issuer.js';
import { grantScope } from './grant-scope.js';
import { checkCodeChallenge } from './pkce.js';
import { parameterLabel } from './parameter-label.js';
import { resumeQuery } from '../http/resume-query.js';
import {
  InvalidRedirectTargetError, InvalidRequestError, UnauthorizedClientError, UnsupportedResponseTypeError,
} from '../errors.js';

/** A request whose client and redirect_uri checked out: errors from here on may be redirected. */
export interface AuthorizationTarget {
  readonly client: OAuthClient;
  readonly redirectUri: string;
  /** The state to echo in an error redirect: absent when the request sent none, repeated it, or sent one too long. */
  readonly state: string | undefined;
}

const MAX_STATE_LENGTH = 2048;

/**
 * Whether a state can be echoed as "the exact value received" (RFC 6749 §4.1.2): not over-long, and no U+FFFD, which
 * is what the query's parser made of octets that are not UTF-8 (`%E9` alone), so echoing it would send other bytes.
 */
function echoable(state: string): boolean {
  return state.length <= MAX_STATE_LENGTH && !state.includes('\uFFFD');
}

function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  return values.length === 0 || values[0] === '' ? undefined : values[0];
}

/**
 * Phase 1: client_id and redirect_uri. Any failure here must not redirect ("If the request fails due to a
 * missing, invalid, or mismatching redirection URI, or if the client identifier is missing or invalid, the
 * authorization server SHOULD inform the resource owner of the error and MUST NOT automatically redirect").
 * @throws InvalidRedirectTargetError.
 * @see RFC 6749 §4.1.2.1, §3.1.2.3 (exact match, RFC 9700 §2.1), SPEC §9.
 */
export async function checkAuthorizationTarget(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, query: URLSearchParams,
): Promise<AuthorizationTarget> {
  for (const name of ['client_id', 'redirect_uri']) {
    if (query.getAll(name).length > 1) throw new InvalidRedirectTargetError('invalid_request', `parameter ${name} is repeated`);
  }
  const clientId = single(query, 'client_id');
  if (clientId === undefined) throw new InvalidRedirectTargetError('invalid_request', 'missing required parameter: client_id');
  const client = isStoreId(clientId) ? await store.clients.findClient(clientId) : null;
  if (!client || client.disabled) throw new InvalidRedirectTargetError('invalid_client', 'unknown client_id');
  const home = issuerForClient(options, client);
  if (home !== issuer) throw new InvalidRedirectTargetError('invalid_client', wrongAddressMessage(options, home));
  const redirectUri = single(query, 'redirect_uri');
  if (redirectUri === undefined) throw new InvalidRedirectTargetError('invalid_request', 'missing required parameter: redirect_uri');
  if (!client.redirectUris.includes(redirectUri)) {
    throw new InvalidRedirectTargetError('invalid_request', 'redirect_uri is not registered for this client');
  }
  const states = query.getAll('state');
  // An over-long or mis-encoded state is refused (phase 2), and not echoed either: RFC 6749 §4.1.2.1 asks for "the
  // exact value received", which a cut or re-encoded copy would not be, and sending kilobytes of request input back into the client's
  // callback serves only whoever crafted the link. Without state, the client cannot match the error to a
  // request of its own, which is the right outcome for a request it did not make this way.
  const state = states.length === 1 && states[0] !== '' && echoable(states[0]!) ? states[0] : undefined;
  return { client, redirectUri, state };
}

/**
 * Phase 2: everything else. Errors thrown here are redirected to the (now trusted) redirect_uri.
 * @throws InvalidRequestError, UnsupportedResponseTypeError, UnauthorizedClientError, InvalidScopeError.
 * @see RFC 6749 §4.1.1, §4.1.2.1, §3.1 (no repeated parameters), §3.3 (scope), RFC 7636 §4.3–4.4.
 */
export function checkAuthorizationParameters(
  options: ResolvedOptions, issuer: ResolvedIssuer, target: AuthorizationTarget, query: URLSearchParams,
  startedAt: number,
): PendingAuthorization {
  for (const name of new Set(query.keys())) {
    if (query.getAll(name).length > 1) throw new InvalidRequestError(`${parameterLabel(name)} is repeated`);
  }
  const state = single(query, 'state');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) throw new InvalidRequestError('state is too long');
  if (state !== undefined && !echoable(state)) {
    throw new InvalidRequestError('state must be UTF-8 once percent-decoded: octets that are not cannot be echoed exactly');
  }
  const responseType = single(query, 'response_type');
  if (responseType === undefined) throw new InvalidRequestError('missing required parameter: response_type');
  if (responseType !== 'code') throw new UnsupportedResponseTypeError('response_type must be code');
  if (target.client.flow !== 'authorization_code') {
    throw new UnauthorizedClientError('this integration is configured for the client_credentials flow');
  }
  const scope = grantScope(single(query, 'scope'), target.client.allowedScopes, options);
  const codeChallenge = checkCodeChallenge(
    single(query, 'code_challenge'),
    single(query, 'code_challenge_method'),
    options.requirePkce || target.client.requirePkce,
  );
  return {
    clientId: target.client.clientId,
    redirectUri: target.redirectUri,
    scope,
    state,
    codeChallenge,
    issuer: issuer.issuer,
    // Validated parameters only: a session or a login form never holds the client's raw, unbounded query.
    query: resumeQuery(query),
    createdAt: startedAt,
  };
}
