// The host-mountable error handler: what a host's body parser refused on the router's addresses, answered the router's way.
import type { ErrorRequestHandler, Request, RequestHandler, Response, Router } from 'express';
import type { ResolvedOptions } from '../options.js';
import { fromBodyParser, isBodyParserRefusal } from './from-body-parser.js';
import { sendTokenEndpointError } from './send-token-endpoint-error.js';

/**
 * How one of the router's routes answers, and to which method it is served. `page`: the authorization endpoint, the
 * connected-applications page and the login, consent, sign-out and withdrawal forms; `document`: the metadata and the
 * JWKS; else an RFC 6749 §5.2 JSON endpoint. Only the POST routes read a body: no GET of the router does.
 */
export type RouterAddress =
  // `head: false`: HEAD is refused there (405), as by the authorization endpoint, whose GET may issue a code.
  | { readonly method: 'GET'; readonly kind: 'page' | 'document'; readonly head?: false }
  | { readonly method: 'POST'; readonly kind: 'page' | 'token' | 'revocation' | 'introspection' };

/**
 * A path as the router's routes match it: the request's own path, not normalised (no dot segments resolved, no
 * percent-decoding, `//` kept), compared without case and with one trailing slash ignored, as Express does by
 * default; null for a request target that is not an origin-form path.
 */
function routeKey(url: string): string | null {
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  if (!path.startsWith('/')) return null;
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

/**
 * Answers 303 to the request's own origin-form target (routeKey matched its path to one of the router's), every byte as
 * sent: the client comes back without the body, through everything the host mounts before the router. Never stored,
 * as no redirect to a page the host's gates decide on may be.
 * @see RFC 9110 §15.4.4 (303: a GET without the body), RFC 9111 §5.2.2.5.
 */
function sendToItself(req: Request, res: Response): void {
  // As the router's own answers: the host's Express says nothing of itself there.
  res.removeHeader('X-Powered-By');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Location', req.originalUrl);
  res.status(303).end();
}

/**
 * Builds `oauth.errorHandler`. A refusal a host's body parser (express.json, express.urlencoded, body-parser) raised
 * before the router saw a request to one of its addresses is answered the router's way. With the route's method, as
 * the router answers an unreadable body: 400 `invalid_request` JSON with the SPEC §4.2 headers at the JSON
 * endpoints, the error page (413, 415, 400) on the forms. With another method the request goes back through `router`
 * as if the parser had not run: the route's 405 (the method is wrong whatever the body). A GET (or HEAD) of the metadata, the JWKS, the
 * authorization endpoint or the connected-applications page, which reads no body, is sent to the same address again (303),
 * so that it comes back without the body through everything the host mounts before the router (its session, its
 * sign-in, its gates), which a walk from here would skip. Every other error passes on to
 * the host's handler untouched: one on another path, one raised after the response started, and one that is no body
 * parser's refusal (a host's 401, 403 or 429, a bug).
 * @see RFC 6749 §5.2, RFC 7009 §2.2.1, RFC 7662 §2.3, RFC 6749 §4.1.2.1 (errors shown, never redirected), §3.1 (the
 * authorization request is its query), RFC 9110 §15.5.6 (405), §9.3.1 (a GET's content has no meaning).
 */
export function createRouterErrorHandler(
  options: ResolvedOptions, router: Router, addresses: ReadonlyMap<string, RouterAddress>, pageError: ErrorRequestHandler,
  pageHeaders: readonly RequestHandler[],
): ErrorRequestHandler {
  const routes = new Map([...addresses].map(([path, address]) => [routeKey(path)!, address]));
  let misMountedLogged = false;
  return function oauthErrorHandler(err, req, res, next) {
    // Called with three arguments, as plain middleware (NestJS's MiddlewareConsumer.apply calls every function so):
    // `res` is then Express's `next`, and no error ever reaches this. Pass the request on rather than answer every
    // request 500 with "next is not a function"; once, say where an error handler goes.
    if (typeof next !== 'function' && typeof res === 'function') {
      if (!misMountedLogged) {
        misMountedLogged = true;
        options.logger.error('express-oauth-router: oauth.errorHandler was called as plain middleware (req, res, next), so it sees no '
          + "errors: it is an Express error handler. Mount it with app.use(oauth.errorHandler) after app.use(oauth.router) (in NestJS, in "
          + "main.ts before app.listen(), not with a module's consumer.apply()).");
      }
      (res as unknown as () => void)();
      return;
    }
    const key = res.headersSent || !isBodyParserRefusal(err) ? null : routeKey(req.originalUrl);
    const address = key === null ? undefined : routes.get(key);
    if (address === undefined) {
      next(err);
      return;
    }
    // A GET page (the authorization endpoint, the connected-applications page) or document (the metadata, the JWKS):
    // sent to itself again, 303, which every client follows as a GET without the body. Walked through the router from
    // here instead, it skipped what the host mounts between its parser and the router, its session (a 500 of a router
    // mounted before it), its sign-in and any gate it keeps (an address allowlist, a rate limit): a malformed body was
    // the way past them, to the page or to the document the gate kept to its own network.
    const again = address.method === 'GET' && (req.method === 'GET' || (req.method === 'HEAD' && address.head !== false));
    if (address.method !== req.method && !again) {
      // The handlers that answer here read no body (a 405), and answer the same whatever the host mounts before the
      // router: a body refused that none of them would read changes nothing. Should the router pass the request on all
      // the same (a sub-app's path that is not the router's), the host's handler gets the refusal, as before.
      router(req, res, (after?: unknown) => next(after === undefined || after === null || after === 'route' || after === 'router' ? err : after));
      return;
    }
    // A GET or HEAD of a document (another method went to its 405 above).
    if (address.kind === 'document') {
      // Readable from any origin, as the documents and their refusals are: a CORS fetch follows only a redirect it may read.
      res.setHeader('Access-Control-Allow-Origin', '*');
      sendToItself(req, res);
      return;
    }
    const refusal = fromBodyParser(err);
    if (address.kind !== 'page') {
      sendTokenEndpointError(res, refusal, options, address.kind);
      return;
    }
    // The pages' own headers (frame, referrer, no-store) first, as their routes would have set them.
    let index = 0;
    const step = (): void => {
      const handler = pageHeaders[index++];
      if (handler) handler(req, res, step);
      else if (!again) pageError(refusal, req, res, next);
      else sendToItself(req, res);
    };
    step();
  };
}
