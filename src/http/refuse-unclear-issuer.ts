// The answer to a request whose issuer cannot be told: two Host lines where the host picks between two issuers.
import type { NextFunction, Response } from 'express';
import type { ResolvedOptions } from '../options.js';
import { toErrorBody } from '../errors.js';
import { sendTokenEndpointError } from './send-token-endpoint-error.js';
import { sendHostRouteJson } from './json-response.js';
import { toOAuthError } from './to-oauth-error.js';

/** The router's endpoints, by the names its dispatch gives them. */
export type EndpointName = 'authorize' | 'login' | 'consent' | 'token' | 'revoke' | 'introspect' | 'metadata' | 'consents' | 'withdraw' | 'logout';

/**
 * Answers as the endpoint answers a bad request: the machine endpoints with RFC 6749 §5.2 JSON and the SPEC §4.2
 * headers, the metadata with JSON that no cache keeps (its answers are otherwise public for five minutes), the pages
 * with their error page (`next`: the route's page error handler comes next).
 * @see RFC 9112 §3.2 (400 for more than one Host line), RFC 6749 §5.2, RFC 7009 §2.2.1, RFC 7662 §2.3.
 */
export function refuseUnclearIssuer(options: ResolvedOptions, name: EndpointName, err: unknown, res: Response, next: NextFunction): void {
  if (name === 'token' || name === 'revoke' || name === 'introspect') {
    sendTokenEndpointError(res, err, options, name === 'token' ? 'token' : name === 'revoke' ? 'revocation' : 'introspection');
  } else if (name === 'metadata') {
    const oauthError = toOAuthError(err, options);
    sendHostRouteJson(res, oauthError.status, toErrorBody(oauthError));
  } else {
    next(err);
  }
}
