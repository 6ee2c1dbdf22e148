// Puts the per-request objects Express hands the package into V8's dictionary mode, where adding a property is cheap.
import { IncomingMessage, ServerResponse } from 'node:http';
import { types } from 'node:util';

const FIRST = Symbol('express-oauth-router.dictionary-first');
const SECOND = Symbol('express-oauth-router.dictionary-second');

/**
 * Makes V8 keep `object`'s properties in a dictionary, leaving the object as it was: same properties, same
 * values, same order, nothing added. Express swaps the prototype of every request and response
 * (`Object.setPrototypeOf`), and V8 then gives each one a hidden class (map) of its own: every property added
 * afterwards (by the router, by Node's `writeHead`, `statusCode`, `statusMessage` …) copies that map and its
 * descriptors, about 7k instructions each, and every property read misses its inline cache. In dictionary mode an
 * added property is a hash insert and a read is a hash lookup. Deleting a property that is not the last one added
 * is what makes V8 switch, so two symbol-keyed properties (no host can hold them) are added and deleted, first the
 * earlier one. Left alone: an object that cannot be extended, a Proxy (whose traps would see the dance), and a
 * request or response still on Node's own prototype (no framework swapped it, so its map is shared and fast).
 * Measured on a bare Express 5 route, 1,411.6k → 1,270.9k instructions per request (client included, BENCHMARKS.md,
 * seventeenth pass).
 * @see SPEC §4.2 (the token endpoint, the busiest route), RFC 6750 §2.1 (the bearer check on every API request).
 */
export function toDictionaryProperties(object: object): void {
  if (!Object.isExtensible(object) || types.isProxy(object)) return;
  const proto: unknown = Object.getPrototypeOf(object);
  if (proto === IncomingMessage.prototype || proto === ServerResponse.prototype) return;
  const record = object as Record<symbol, unknown>;
  record[FIRST] = 0;
  record[SECOND] = 0;
  delete record[FIRST];
  delete record[SECOND];
}
