// The error answer of the token, revocation and introspection endpoints (RFC 6749 §5.2).
import type { Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import { toErrorBody } from '../errors.js';
import { sendNoStoreJson } from './json-response.js';
import { basicChallenge } from './www-authenticate.js';
import { toOAuthError } from './to-oauth-error.js';

/**
 * JSON `{ error, error_description }` with the SPEC §4.2 header set; `invalid_client` is 401 with
 * `WWW-Authenticate: Basic realm="…"` ("the authorization server … MUST include the WWW-Authenticate
 * response header field matching the authentication scheme used by the client").
 * @see RFC 6749 §5.2, RFC 7009 §2.2.1, RFC 7662 §2.3.
 */
export function sendTokenEndpointError(res: Response, err: unknown, options: ResolvedOptions): void {
  const oauthError = toOAuthError(err, options.logger);
  const challenge = oauthError.error === 'invalid_client' ? [['WWW-Authenticate', basicChallenge(options.realm)] as const] : undefined;
  sendNoStoreJson(res, oauthError.status, toErrorBody(oauthError), challenge);
}
