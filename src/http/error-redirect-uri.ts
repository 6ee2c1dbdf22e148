// The authorization endpoint's error redirect: the one place its error, description, state and iss are put together.
import { encodeParams, redirectUriWithParams, type ParamValue } from './redirect-uri-with-params.js';
import { toErrorDescription } from './error-description.js';
import type { ErrorResponseMode } from '../checks/error-response-mode.js';

/** What an error redirect says. */
export interface RedirectedError {
  readonly error: string;
  /** Omitted when the error's details must not reach the client (a server error). */
  readonly description?: string | undefined;
  /** The request's state as received, or absent. */
  readonly state: string | undefined;
  /** Instead of `state`: one whose octets are not UTF-8, already percent-encoded octet for octet. */
  readonly stateOctets?: string | undefined;
  readonly issuer: string;
}

/**
 * `redirect_uri?error=…&error_description=…&state=…&iss=…`, the description held to RFC 6749's character set; with
 * `mode` `fragment`, the same parameters in the fragment (`redirect_uri#error=…`), the registered URI's own query
 * kept as it is and any fragment it has dropped (a redirection endpoint has none, §3.1.2).
 * @see RFC 6749 §4.1.2.1 (error response; `error_description` charset; `state` "if present in the client
 * authorization request"), §4.2.2.1 (in the fragment), RFC 9207 §2 (`iss`).
 */
export function errorRedirectUri(redirectUri: string, error: RedirectedError, mode: ErrorResponseMode = 'query'): string {
  const params: ReadonlyArray<readonly [string, ParamValue]> = [
    ['error', error.error],
    ['error_description', error.description === undefined ? undefined : toErrorDescription(error.description)],
    ['state', error.stateOctets === undefined ? error.state : { encoded: error.stateOctets }],
    ['iss', error.issuer],
  ];
  if (mode === 'query') return redirectUriWithParams(redirectUri, params);
  const at = redirectUri.indexOf('#');
  return `${at === -1 ? redirectUri : redirectUri.slice(0, at)}#${encodeParams(params)}`;
}
