// The error answer of the token, revocation and introspection endpoints (RFC 6749 §5.2).
import type { Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import { toErrorBody, TooManyAttemptsError, UnreadableBodyError } from '../errors.js';
import { sendNoStoreJson } from './json-response.js';
import { basicChallenge } from './www-authenticate.js';
import { toOAuthError } from './to-oauth-error.js';
import { reportErrorAnswer, type ErrorEndpoint } from '../metrics/channels.js';
import { drainRefusedBody } from './drain-refused-body.js';

/**
 * JSON `{ error, error_description }` with the SPEC §4.2 header set; `invalid_client` is 401 with
 * `WWW-Authenticate: Basic realm="…"` ("the authorization server … MUST include the WWW-Authenticate
 * response header field matching the authentication scheme used by the client"). A body refused unread
 * (too large, encoded, late) closes the connection, once the rest of a too large or encoded one has been read off
 * (drainRefusedBody, bounded), so that a proxy still sending it reads the answer rather than a reset.
 * The answer is reported on the `express-oauth-router:error` diagnostics channel with `endpoint`.
 * @see RFC 6749 §5.2, RFC 7009 §2.2.1, RFC 7662 §2.3, RFC 9110 §15.5.9.
 */
export function sendTokenEndpointError(
  res: Response, err: unknown, options: ResolvedOptions, endpoint: Extract<ErrorEndpoint, 'token' | 'revocation' | 'introspection'>,
): void {
  const oauthError = toOAuthError(err, options);
  reportErrorAnswer(options.events, endpoint, oauthError.error, oauthError.status);
  const extra: Array<readonly [string, string]> = [];
  if (oauthError.error === 'invalid_client') extra.push(['WWW-Authenticate', basicChallenge(options.realm)]);
  if (oauthError instanceof UnreadableBodyError) extra.push(['Connection', 'close']);
  // RFC 6585 §4: a 429 "MAY include a Retry-After header indicating how long to wait".
  if (oauthError instanceof TooManyAttemptsError) extra.push(['Retry-After', String(oauthError.retryAfterSeconds)]);
  const send = (): void => sendNoStoreJson(res, oauthError.status, toErrorBody(oauthError), extra);
  // A body refused while it still arrives (too large, encoded) is read off first, bounded, so the close after the
  // answer is no reset that a proxy would turn into a 502; a late one (408) is not waited for again, nor one whose
  // framing Node does not know (501).
  if (oauthError instanceof UnreadableBodyError && (oauthError.pageStatus === 413 || oauthError.pageStatus === 415)) drainRefusedBody(res.req, send);
  else send();
}
