// Validates GET /oauth2/authorize in the order RFC 6749 §4.1.2.1 requires: target first, then the rest.
import type { OAuthClient, Store } from '../stores/contract.js';
import { isStoreId } from '../stores/store-policy.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { PendingAuthorization } from '../http/oauth-session.js';
import { issuerForClient, wrongAddressMessage } from './issuer.js';
import { grantScope } from './grant-scope.js';
import { checkCodeChallenge } from './pkce.js';
import { AUTHORIZATION_PARAMETERS, parameterLabel } from './parameter-label.js';
import { fitsLoginForm } from '../http/login-request.js';
import { resumeQuery } from '../http/resume-query.js';
import { queryValueOctets } from '../http/query-value-octets.js';
import { responseParameterIn } from './registered-redirect-uri.js';
import { isRegisteredRedirectUri } from './redirect-uri-match.js';
import {
  InvalidRedirectTargetError, InvalidRequestError, UnauthorizedClientError, UnsupportedResponseTypeError,
} from '../errors.js';

/** A request whose client and redirect_uri checked out: errors from here on may be redirected. */
export interface AuthorizationTarget {
  readonly client: OAuthClient;
  readonly redirectUri: string;
  /** The state to echo in an error redirect, as received; absent when the request sent none. */
  readonly state: string | undefined;
  /**
   * A state whose octets are not UTF-8 (so `state` holds none), percent-encoded octet for octet: echoed as it
   * came, since the parser's string could not be (RFC 6749 §4.1.2.1, "the exact value received").
   */
  readonly stateOctets?: string;
}

/** The longest state, as the callback's query carries it (percent-encoded). */
const MAX_STATE_LENGTH = 2048;

/**
 * The length of `state` once form-encoded into the callback's query: what proxies' header buffers and the login
 * form's size must hold. Counting characters let 2,048 CJK ones through, 18 KB once encoded (an attack audit: the
 * login form then exceeded its own limit, so the user could never sign in).
 */
function encodedStateLength(state: string): number {
  return new URLSearchParams([['', state]]).toString().length - 1;
}

/**
 * Whether a state's string is "the exact value received" (RFC 6749 §4.1.2): no U+FFFD, which is what the query's
 * parser made of octets that are not UTF-8 (`%E9` alone), so encoding the string again would send other bytes.
 */
function echoable(state: string): boolean {
  return !state.includes('\uFFFD');
}

/** The values of `name` that are not empty: "Parameters sent without a value MUST be treated as if they were omitted". */
function sent(query: URLSearchParams, name: string): string[] {
  return query.getAll(name).filter((value) => value !== '');
}

/** The value of a parameter already checked not to be repeated. */
function single(query: URLSearchParams, name: string): string | undefined {
  return sent(query, name)[0];
}

/**
 * Phase 1: client_id and redirect_uri. Any failure here must not redirect ("If the request fails due to a
 * missing, invalid, or mismatching redirection URI, or if the client identifier is missing or invalid, the
 * authorization server SHOULD inform the resource owner of the error and MUST NOT automatically redirect").
 * A state that no error redirect could echo exactly (sent twice, or longer than any callback should carry) is
 * refused here too: the client could not match such an error to its request, and a stateless one breaks §4.1.2.1.
 * @throws InvalidRedirectTargetError.
 * @see RFC 6749 §4.1.2.1, §3.1.2.3 (exact match, RFC 9700 §2.1; a loopback IP literal's port, RFC 8252 §7.3), SPEC §9.
 */
export async function checkAuthorizationTarget(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, query: URLSearchParams, rawQuery = '',
): Promise<AuthorizationTarget> {
  for (const name of ['client_id', 'redirect_uri']) {
    if (sent(query, name).length > 1) throw new InvalidRedirectTargetError('invalid_request', `parameter ${name} is repeated`);
  }
  const clientId = single(query, 'client_id');
  if (clientId === undefined) throw new InvalidRedirectTargetError('invalid_request', 'missing required parameter: client_id');
  const client = isStoreId(clientId) ? await store.clients.findClient(clientId) : null;
  if (!client || client.disabled) throw new InvalidRedirectTargetError('invalid_client', 'unknown client_id');
  const home = issuerForClient(options, client);
  if (home !== issuer) throw new InvalidRedirectTargetError('invalid_client', wrongAddressMessage(options, home));
  const redirectUri = single(query, 'redirect_uri');
  if (redirectUri === undefined) throw new InvalidRedirectTargetError('invalid_request', 'missing required parameter: redirect_uri');
  if (!isRegisteredRedirectUri(client.redirectUris, redirectUri)) {
    throw new InvalidRedirectTargetError('invalid_request', 'redirect_uri is not registered for this client');
  }
  // Registered before registration refused these (or by a tool writing the store): every answer would repeat one.
  const taken = responseParameterIn(redirectUri);
  if (taken !== null) {
    throw new InvalidRedirectTargetError('invalid_request', `the registered redirect_uri has ${taken} in its query, which the response adds; register it without`);
  }
  const states = sent(query, 'state');
  if (states.length > 1) throw new InvalidRedirectTargetError('invalid_request', 'parameter state is repeated');
  const state = states[0];
  // Kilobytes of request input echoed into the callback's Location would overflow common proxies' header
  // buffers (nginx: 4–8 KB), and a cut copy is not "the exact value received": no redirect at all.
  if (state !== undefined && (state.length > MAX_STATE_LENGTH || encodedStateLength(state) > MAX_STATE_LENGTH)) {
    throw new InvalidRedirectTargetError('invalid_request', 'state is too long');
  }
  if (state === undefined || echoable(state)) return { client, redirectUri, state };
  const stateOctets = queryValueOctets(rawQuery, 'state');
  return stateOctets === undefined ? { client, redirectUri, state: undefined } : { client, redirectUri, state: undefined, stateOctets };
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
  // Parameters the endpoint does not read are ignored, repeated or not (§3.1).
  for (const name of new Set(query.keys())) {
    if (AUTHORIZATION_PARAMETERS.has(name) && sent(query, name).length > 1) throw new InvalidRequestError(`${parameterLabel(name)} is repeated`);
  }
  const state = single(query, 'state');
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
  // Validated parameters only: a session or a login form never holds the client's raw, unbounded query.
  const kept = resumeQuery(query);
  // What the login form must carry back: a request it could not would show a page no sign-in can get past.
  if (!fitsLoginForm(kept)) throw new InvalidRequestError('the authorization request is too long (its scope or prompt)');
  return {
    clientId: target.client.clientId,
    redirectUri: target.redirectUri,
    scope,
    state,
    codeChallenge,
    issuer: issuer.issuer,
    query: kept,
    createdAt: startedAt,
  };
}
