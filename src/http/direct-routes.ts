// The machine endpoints' POST routes served straight from their exact path, without walking the Router's stack.
import { tracingChannel } from 'node:diagnostics_channel';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';

/**
 * express's router (2.3+) publishes every handler it runs on this tracing channel, for APM tools. While anyone
 * subscribes, requests walk the stack as usual, so a traced host sees the token endpoint like any other route.
 */
const routerTracing = tracingChannel('express.router.request');

/** One route served directly: its exact path (relative to where the router is mounted) and its POST handler. */
export interface DirectRoute {
  readonly path: string;
  /** The Route that holds `handler` in the router's stack: what `req.route` is set to, as the stack would. */
  readonly route: unknown;
  readonly handler: RequestHandler;
}

type HandleFunction = (req: Request, res: Response, out: NextFunction) => void;

/**
 * Makes `router` answer a POST to one of `routes`' exact paths (a query string allowed) by calling the route's
 * handler at once. Walking the stack for it (the Router's `handle`, its per-request closures and state, the
 * layer's path match, the Route's own dispatch) cost 3–7 µs of CPU per request, 4–10 % of a bare Express
 * request, on the busiest endpoint. Everything else, and every variant the stack would also match (another case,
 * a trailing slash, encoded characters, other methods), walks the stack as before, so the routes registered
 * there stay the single definition of what answers where. Each route must answer every request itself (the
 * machine endpoints never call `next`), and must come first among the stack's matches for its path; an error
 * thrown or rejected goes to the host's `next`, as it would leave the router.
 * @see RFC 6749 §3.2 (the token endpoint), RFC 7009 §2, RFC 7662 §2.
 */
export function serveDirectly(router: Router, routes: readonly DirectRoute[]): void {
  const byPath = new Map(routes.map((route) => [route.path, route]));
  const target = router as unknown as { handle: HandleFunction };
  const walk = target.handle;
  target.handle = function handle(this: unknown, req: Request, res: Response, out: NextFunction): void {
    if (req.method === 'POST' && !routerTracing.hasSubscribers) {
      const url = req.url;
      const query = url.indexOf('?');
      const direct = byPath.get(query === -1 ? url : url.slice(0, query));
      if (direct) {
        serve(direct, req, res, out);
        return;
      }
    }
    walk.call(this, req, res, out);
  };
}

/** What the stack does once it has matched the route: `req.route` and `req.params` set, errors forwarded. */
function serve(direct: DirectRoute, req: Request, res: Response, out: NextFunction): void {
  (req as { route: unknown }).route = direct.route;
  req.params = {};
  try {
    const answered: unknown = direct.handler(req, res, out);
    if (answered instanceof Promise) answered.then(undefined, (err: unknown) => out(err ?? new Error('Rejected promise')));
  } catch (err) {
    out(err);
  }
}
