// The authorization endpoint's error redirect: the one place its error, description, state and iss are put together.
import { redirectUriWithParams } from './redirect-uri-with-params.js';
import { toErrorDescription } from './error-description.js';

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
 * `redirect_uri?error=…&error_description=…&state=…&iss=…`, the description held to RFC 6749's character set.
 * @see RFC 6749 §4.1.2.1 (error response; `error_description` charset; `state` "if present in the client
 * authorization request"), RFC 9207 §2 (`iss`).
 */
export function errorRedirectUri(redirectUri: string, error: RedirectedError): string {
  return redirectUriWithParams(redirectUri, [
    ['error', error.error],
    ['error_description', error.description === undefined ? undefined : toErrorDescription(error.description)],
    ['state', error.stateOctets === undefined ? error.state : { encoded: error.stateOctets }],
    ['iss', error.issuer],
  ]);
}
