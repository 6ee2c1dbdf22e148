// The host-mountable error handler: what a host's body parser refused on the router's addresses, answered the router's way.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { ResolvedOptions } from '../options.js';
import { fromBodyParser } from './from-body-parser.js';
import { sendTokenEndpointError } from './send-token-endpoint-error.js';

/** The router's addresses by how they answer, as paths (`/oauth2/token`, `/legacy/oauth2/login`, …). */
export interface RouterAddresses {
  /** Token, revocation and introspection endpoints: RFC 6749 §5.2 JSON. */
  readonly json: ReadonlyMap<string, 'token' | 'revocation' | 'introspection'>;
  /** Login, consent, sign-out and connected-applications forms: error pages. */
  readonly pages: ReadonlySet<string>;
}

/** A path as Express routes it by default: case-insensitive, one trailing slash ignored. */
function routeKey(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

/**
 * Builds `oauth.errorHandler`. An error a host's parser (express.json, express.urlencoded, body-parser) raised
 * before the router saw a request for one of its addresses is answered as the router answers an unreadable body:
 * 400 `invalid_request` JSON with the SPEC §4.2 headers at the JSON endpoints, the error page (413, 415, 400) on
 * the page forms. Errors on any other path, errors after a response has started, and errors that are no parser's
 * refusal (a host bug: 500 from the host's own handler) pass on to the next error handler untouched.
 * @see RFC 6749 §5.2, RFC 7009 §2.2.1, RFC 7662 §2.3, RFC 6749 §4.1.2.1 (errors shown, never redirected).
 */
export function createRouterErrorHandler(
  options: ResolvedOptions, addresses: RouterAddresses, pageError: ErrorRequestHandler, pageHeaders: readonly RequestHandler[],
): ErrorRequestHandler {
  const json = new Map([...addresses.json].map(([path, endpoint]) => [routeKey(path), endpoint]));
  const pages = new Set([...addresses.pages].map(routeKey));
  return function oauthErrorHandler(err, req, res, next) {
    const refusal = fromBodyParser(err);
    if (res.headersSent || refusal === err) {
      next(err);
      return;
    }
    const path = routeKey(new URL(req.originalUrl, 'http://host.invalid').pathname);
    const endpoint = json.get(path);
    if (endpoint !== undefined) {
      sendTokenEndpointError(res, refusal, options, endpoint);
      return;
    }
    if (!pages.has(path)) {
      next(err);
      return;
    }
    // The pages' own headers (frame, referrer, no-store) first, as their routes would have set them.
    let index = 0;
    const step = (): void => {
      const handler = pageHeaders[index++];
      if (handler) handler(req, res, step);
      else pageError(refusal, req, res, next);
    };
    step();
  };
}
