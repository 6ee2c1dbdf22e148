// Puts the per-request objects Express hands the package into V8's dictionary mode, where adding a property is cheap.
import { IncomingMessage, ServerResponse } from 'node:http';
import { types } from 'node:util';

const MARK = Symbol('express-oauth-router.dictionary');

/**
 * Makes V8 keep `object`'s properties in a dictionary, leaving the object as it was: same properties, same
 * values, same order, nothing added. Express swaps the prototype of every request and response
 * (`Object.setPrototypeOf`), and V8 then gives each one a hidden class (map) of its own: every property added
 * afterwards (by the router, by Node's `writeHead`, `statusCode`, `statusMessage` …) copies that map and its
 * descriptors, about 7k instructions each, and every property read misses its inline cache. In dictionary mode an
 * added property is a hash insert and a read is a hash lookup. A delete is what makes V8 switch: one that can
 * step back to the map the object had (the last property added, on a map reached by a transition) keeps it fast,
 * and any other normalizes it. A map of its own has no transition to step back along, so one symbol-keyed property
 * (no host can hold it) added and deleted is enough; a second one, deleted first, would make even a shared map
 * switch, at the price of one more map copy per object (about 27k instructions of map work a request, eighteenth
 * pass).
 * Left alone: an object that cannot be extended, a Proxy (whose traps would see the dance), and a request or
 * response still on Node's own prototype (no framework swapped it, so its map is shared and fast). Measured on a
 * bare Express 5 route, 1,411.6k → 1,270.9k instructions per request (client included, BENCHMARKS.md,
 * seventeenth pass).
 * @see SPEC §4.2 (the token endpoint, the busiest route), RFC 6750 §2.1 (the bearer check on every API request).
 */
export function toDictionaryProperties(object: object): void {
  if (!Object.isExtensible(object) || types.isProxy(object)) return;
  const proto: unknown = Object.getPrototypeOf(object);
  if (proto === IncomingMessage.prototype || proto === ServerResponse.prototype) return;
  const record = object as Record<symbol, unknown>;
  record[MARK] = 0;
  delete record[MARK];
}
