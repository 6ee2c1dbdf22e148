// Where requireBearer puts req.auth: behind an accessor on Express's request prototype, its value in a symbol-keyed slot of the request.
import { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import type { BearerAuth } from '../types.js';

/**
 * Where each request's auth is held: a symbol-keyed property of the request itself, which no host can name.
 * requireBearer has put the request in dictionary mode by then (toDictionaryProperties), so the property is a hash
 * insert; a WeakMap entry cost more, its key being a young object every time (V8's ephemeron write barrier and the
 * scavenger's ephemeron pass, about 1.3 µs a request under wrk, BENCHMARKS.md, eighteenth pass).
 */
const AUTH = Symbol('express-oauth-router.auth');
type HoldsAuth = { [AUTH]?: BearerAuth };
/** Request prototypes already looked at: each is walked once. */
const seen = new WeakSet<object>();
let lastSeen: object | null = null;

/**
 * The `auth` accessor, installed once on the prototype that Express puts at the root of every app's request
 * prototype (`express.request`, whose own prototype is Node's IncomingMessage.prototype: the extension point
 * Express documents for adding request properties). A host's own `req.auth = …` goes through the setter and
 * reads back the same; `undefined` clears it.
 */
const AUTH_ACCESSOR: PropertyDescriptor = {
  configurable: true,
  enumerable: false,
  get(this: HoldsAuth): BearerAuth | undefined {
    return this[AUTH];
  },
  set(this: HoldsAuth, value: BearerAuth | undefined) {
    if (value === undefined) delete this[AUTH];
    else this[AUTH] = value;
  },
};

/**
 * Installs the accessor above `proto` if the chain is Express's (some prototypes, then `express.request`, then
 * IncomingMessage.prototype) and nothing on it defines `auth` yet. Anything else (a host without Express, a
 * chain that already has an `auth`) keeps the plain property. `express.request` rather than the app's own
 * prototype: a sub-app's requests, and a request leaving a sub-app, see it too.
 */
function prepare(proto: object | null): void {
  let root = proto;
  while (root !== null && Object.getPrototypeOf(root) !== IncomingMessage.prototype) root = Object.getPrototypeOf(root) as object | null;
  // Express's own request methods tell its prototype from a host's IncomingMessage subclass, left alone.
  if (root === null || !Object.hasOwn(root, 'accepts') || !Object.hasOwn(root, 'is')) return;
  if ('auth' in root || !Object.isExtensible(root)) return;
  Object.defineProperty(root, 'auth', AUTH_ACCESSOR);
}

/**
 * Sets `req.auth` for the host's handlers (RFC 6750 §2.1: who the access token is for).
 * Express swaps each request's prototype for its app's, after which V8 gives every request a map of its own:
 * a property added to one then copies its map and descriptors, about 20k instructions, 3 % of a bare Express
 * request. Assigned through an accessor found on the prototype chain, `auth` itself stays off the request: hosts
 * see it as they always have, and the value lands in the request's own symbol-keyed slot (see AUTH).
 * @see RFC 6750 §2.1.
 */
export function setRequestAuth(req: Request, auth: BearerAuth): void {
  const proto = Object.getPrototypeOf(req) as object | null;
  if (proto !== lastSeen && proto !== null) {
    lastSeen = proto;
    if (!seen.has(proto)) {
      seen.add(proto);
      prepare(proto);
    }
  }
  req.auth = auth;
}
