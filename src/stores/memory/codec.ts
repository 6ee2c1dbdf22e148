// The memory store's record encoding and its gate: deep copies with dates as numbers, like a real database, on a later turn.

/** Keys whose values are Dates in every record type; revived from ISO strings on read. */
const DATE_KEYS = new Set([
  'expiresAt', 'createdAt', 'credentialsIssuedAt', 'grantedAt', 'issuedAt', 'previousClientSecretExpiresAt',
]);

declare const encodedBrand: unique symbol;
/** A record as the memory store holds it: a deep copy, dates as epoch milliseconds, shared with no caller. */
export type Encoded = { readonly [encodedBrand]: true };

/**
 * Copies plain data (objects, arrays, primitives, Dates), leaving out `undefined` properties as JSON would;
 * `stored` turns Dates into epoch ms, otherwise the DATE_KEYS numbers become Dates again.
 */
function copy(value: unknown, stored: boolean, key: string): unknown {
  if (value === null || typeof value !== 'object') {
    return !stored && typeof value === 'number' && DATE_KEYS.has(key) ? new Date(value) : value;
  }
  if (value instanceof Date) return stored ? value.getTime() : new Date(value.getTime());
  if (Array.isArray(value)) return value.map((item: unknown) => copy(item, stored, ''));
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[name];
    if (field !== undefined) out[name] = copy(field, stored, name);
  }
  return out;
}

/**
 * Copies a record into the store, so the store never shares an object with its caller. A deep copy rather
 * than JSON text: JSON.stringify and a reviving JSON.parse were 10 % of a token request's busy samples.
 */
export function encode(value: unknown): Encoded {
  return copy(value, true, '') as Encoded;
}

/** A fresh copy of a stored record for a caller, date fields as `Date` objects. */
export function decode<T>(stored: Encoded): T {
  return copy(stored, false, '') as T;
}

/** Resolves on a later turn of the event loop, so callers cannot rely on synchronous answers. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Whether a record expiring at `expiresAt` is still live at `now` (ms). */
export function isLive(expiresAt: Date, now: number): boolean {
  return expiresAt.getTime() > now;
}

/** A map key for a pair of ids: JSON of the pair, so no separator character can make two pairs collide. */
export function pairKey(first: string, second: string): string {
  return JSON.stringify([first, second]);
}

/** The gate every operation of one memory store passes: a later turn, refused once the store is closed. */
export type Ready = () => Promise<void>;
