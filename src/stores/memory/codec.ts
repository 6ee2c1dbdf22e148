// The memory store's record encoding and its gate: JSON strings, like a real database, on a later turn.

/** Keys whose values are Dates in every record type; revived from ISO strings on read. */
const DATE_KEYS = new Set([
  'expiresAt', 'createdAt', 'credentialsIssuedAt', 'grantedAt', 'issuedAt', 'previousClientSecretExpiresAt',
]);

/** Serialises a record so the store never shares an object with its caller. */
export function encode(value: unknown): string {
  return JSON.stringify(value);
}

/** Parses a stored record, turning date fields back into `Date` objects. */
export function decode<T>(json: string): T {
  return JSON.parse(json, (key, value: unknown) =>
    DATE_KEYS.has(key) && typeof value === 'string' ? new Date(value) : value,
  ) as T;
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
