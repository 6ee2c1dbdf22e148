// Reduces a driver's error to what a log line may carry: its message and code, never the object behind it.

/** An error as a store reports it: one line of text and the driver's code, when it has one. */
export interface StoreErrorSummary {
  /** One line, at most 300 characters, with any `scheme://user:password@` userinfo replaced by `***`. */
  readonly message: string;
  /** e.g. `ECONNREFUSED`, `57P01` (PostgreSQL's SQLSTATE); absent when the error has none. */
  readonly code?: string;
}

const MAX_LENGTH = 300;

/**
 * `scheme://user:password@` → `scheme://***@`: a driver may quote the URL it was given. Anchored on `://`, not on
 * the scheme: a scheme pattern tried at every word boundary was quadratic on a long message of short words (a
 * 64 KB `a.a.a.…` took 2.5 s); this is linear (0.2 ms), and masks a userinfo after any `://`. Up to the authority's
 * last `@`, as WHATWG URL (pg, node-redis) reads it: a password with an unencoded `@` connects, and its rest would
 * otherwise be logged. Still linear: each scan stops at the next whitespace or `/`, which the next `://` holds.
 */
function withoutUserinfo(text: string): string {
  return text.replace(/:\/\/[^\s/]*@/g, '://***@');
}

/**
 * What a store's warning may say about an error: its message (for an AggregateError such as a refused
 * connection to both ::1 and 127.0.0.1, whose own message is empty, the first inner one's) and its `code`.
 * Never the error object: node-postgres hangs its whole connection on its errors, the per-connection cancel
 * `secretKey` included, and a logger that prints objects would write ~100 lines of it per dropped connection.
 * @see README "PostgreSQL and Redis" (store logger), RFC 6819 §5.1.4.1.1 (no secrets in logs).
 */
export function describeStoreError(error: unknown): StoreErrorSummary {
  let message: string;
  let code: unknown;
  if (error instanceof Error) {
    const inner = error instanceof AggregateError ? (error.errors as unknown[]).find((e) => e instanceof Error) : undefined;
    message = error.message || (inner instanceof Error ? inner.message : '') || error.name;
    code = (error as { code?: unknown }).code ?? (inner as { code?: unknown } | undefined)?.code;
  } else {
    message = typeof error === 'string' ? error : `a thrown ${error === null ? 'null' : typeof error}`;
  }
  const line = withoutUserinfo(message).replace(/\s+/g, ' ').trim();
  const summary = line.length > MAX_LENGTH ? `${line.slice(0, MAX_LENGTH - 1)}…` : line;
  return typeof code === 'string' || typeof code === 'number' ? { message: summary, code: String(code) } : { message: summary };
}
