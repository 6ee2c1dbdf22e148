// Two shortcuts through the package's router: the machine endpoints' POSTs served at once, and other paths passed on at once.
import { channel, tracingChannel } from 'node:diagnostics_channel';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { toDictionaryProperties } from './dictionary-properties.js';

/**
 * express's router (2.3+) publishes every handler it runs on this tracing channel, for APM tools. While anyone
 * subscribes, requests walk the stack as usual, so a traced host sees the token endpoint like any other route.
 */
const routerTracing = tracingChannel('express.router.request');

/**
 * Datadog's dd-trace publishes each layer it sees run on channels of its own (`apm:router:…` under Express 5's
 * router, `apm:express:…` under Express 4) and names the request's span and `http.route` from them; served
 * directly, the machine endpoints' spans were a bare `POST`. Its plugins subscribe to these while they trace.
 */
const ddTraceLayers = [channel('apm:router:middleware:enter'), channel('apm:express:middleware:enter')];

/** Whether an APM tool listens to the router's layers run, on express's channel or dd-trace's own. */
function layersTraced(): boolean {
  return routerTracing.hasSubscribers || ddTraceLayers[0]!.hasSubscribers || ddTraceLayers[1]!.hasSubscribers;
}

/**
 * Whether an APM tool has wrapped the stack's layers as they were made: OpenTelemetry's instrumentation-express
 * subscribes to no channel; it wraps each layer's `handle` with shimmer, which marks the wrapper `__wrapped`, and
 * names the request's span and its `http.route` from the layers it sees run. Layers are wrapped when they are
 * made, so one look when the router is set up tells for good.
 */
function wrappedByApm(stack: readonly StackLayer[]): boolean {
  return stack.some((layer) => (layer.handle as { __wrapped?: unknown } | undefined)?.__wrapped === true);
}

/**
 * Whether an APM tool has wrapped a route's handler as it was registered: New Relic replaces every handler
 * `route.post(handler)` is given with its own, which names the transaction from the path it runs under;
 * served directly (the handler as given), the machine endpoints were all one transaction, `POST /`.
 */
function handlerReplaced(direct: DirectRoute): boolean {
  const layers = (direct.route as { stack?: unknown } | null)?.stack;
  return !Array.isArray(layers) || !layers.some((layer: StackLayer) => layer.handle === direct.handler);
}

/** One route served directly: its exact path (relative to where the router is mounted) and its POST handler. */
export interface DirectRoute {
  readonly path: string;
  /** The Route that holds `handler` in the router's stack: what `req.route` is set to, as the stack would. */
  readonly route: unknown;
  readonly handler: RequestHandler;
}

type HandleFunction = (req: Request, res: Response, out: NextFunction) => void;
type StackLayer = { readonly route?: { readonly path?: unknown }; readonly handle?: unknown };

/** What path-to-regexp reads as syntax rather than text: a route path with any of it is never pre-judged. */
const PATH_SYNTAX = /[:*?+()[\]{}!\\%#]/;
/**
 * A request path the router's URL parsing (parseurl) takes as it is: printable ASCII without `#` (a fragment)
 * or `%` (an escape). Whitespace and other characters make it re-parse the URL, so such paths are walked.
 */
const PLAIN_PATH = /^\/[\x21\x22\x24\x26-\x7e]*$/;

/** A path as the router compares it by default: any case, one trailing slash optional (so kept without it). */
function comparable(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

/**
 * The lower-cased paths of every route on `stack`, or null if a layer is not a route of plain text paths (a
 * host's `use`, a parameter, a RegExp): then no path can be judged unmatched without the stack.
 */
function plainRoutePaths(stack: readonly StackLayer[]): Set<string> | null {
  const paths = new Set<string>();
  for (const layer of stack) {
    const path = layer.route?.path;
    const list = Array.isArray(path) ? path : [path];
    for (const item of list) {
      if (typeof item !== 'string' || !item.startsWith('/') || PATH_SYNTAX.test(item)) return null;
      paths.add(comparable(item));
    }
  }
  return paths;
}

/**
 * Makes `router` skip walking its stack in two cases where the walk's outcome is known.
 * - A POST to one of `routes`' exact paths (a query string allowed) calls the route's handler at once. Walking
 *   the stack for it (the Router's `handle`, its per-request closures and state, the layer's path match, the
 *   Route's own dispatch) cost 3–7 µs of CPU per request, 4–10 % of a bare Express request, on the busiest
 *   endpoint. Each such route must answer every request itself (the machine endpoints never call `next`) and
 *   come first among the stack's matches for its path; an error it throws or rejects goes to the host's
 *   `next`, as it would leave the router. Skipped while an APM tool subscribes to the router's tracing channel
 *   or dd-trace's (`layersTraced`), and for good when one has wrapped the stack's layers (OpenTelemetry:
 *   `wrappedByApm`) or a route's handler (New Relic: `handlerReplaced`).
 * - A request whose path no route of the stack can match (the host's API, when the host mounts this router
 *   before it, as the README shows) is handed to the host's `next` at once instead of being compared with
 *   every route: 29–38k instructions per API request, 5–6 % of a bare one. The routes match as Express's do
 *   by default (any case, one optional trailing slash), so the path is compared lower-cased, with one trailing
 *   slash taken off. Only while the stack still holds just the routes it held here and all of them are plain
 *   text; a path with `%`, `#`, whitespace or other than printable ASCII, or an absolute-form URL, is always
 *   walked.
 * Everything else walks the stack as before, so the routes registered there stay the single definition of
 * what answers where. `mountedAtPath` hears once of a router mounted under a path, where none of its routes
 * answers at the issuer's addresses.
 * @see RFC 6749 §3.1–3.2 (the endpoints), RFC 7009 §2, RFC 7662 §2.
 */
export function serveDirectly(router: Router, routes: readonly DirectRoute[], mountedAtPath: (baseUrl: string) => void = () => {}): void {
  const byPath = new Map(routes.map((route) => [route.path, route]));
  let mountReported = false;
  const stack = (router as unknown as { stack: StackLayer[] }).stack;
  const layers = stack.length;
  const known = plainRoutePaths(stack);
  const traced = wrappedByApm(stack) || routes.some(handlerReplaced);
  const target = router as unknown as { handle: HandleFunction };
  const walk = target.handle;
  target.handle = function handle(this: unknown, req: Request, res: Response, out: NextFunction): void {
    // Mounted under a path (`app.use('/auth', router)`), no route would answer where the issuer says: told once.
    if (!mountReported && req.baseUrl) {
      mountReported = true;
      mountedAtPath(req.baseUrl);
    }
    const url = req.url;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (req.method === 'POST' && !traced && !layersTraced()) {
      const direct = byPath.get(path);
      if (direct) {
        serve(direct, req, res, out);
        return;
      }
    }
    // PLAIN_PATH also leaves out absolute-form targets ("http://host/path"), which the router parses itself.
    if (known !== null && stack.length === layers && PLAIN_PATH.test(path)) {
      if (!known.has(comparable(path))) {
        out();
        return;
      }
    }
    walk.call(this, req, res, out);
  };
}

/** What the stack does once it has matched the route: `req.route` and `req.params` set, errors forwarded. */
function serve(direct: DirectRoute, req: Request, res: Response, out: NextFunction): void {
  // Before the first property this request gets from here on (see toDictionaryProperties).
  toDictionaryProperties(req);
  toDictionaryProperties(res);
  (req as { route: unknown }).route = direct.route;
  req.params = {};
  try {
    const answered: unknown = direct.handler(req, res, out);
    if (answered instanceof Promise) answered.then(undefined, (err: unknown) => out(err ?? new Error('Rejected promise')));
  } catch (err) {
    out(err);
  }
}
