// The latest moment a token or code may expire: the last second of the year 9999.

/**
 * 9999-12-31T23:59:59Z in ms: the last second a NumericDate can name that every Date, store and client holds alike
 * (`toISOString` writes a later one as `+010000-…`, which PostgreSQL's timestamptz input refuses, and the JWT verifier
 * refuses an `exp` past it). Reached only by a clock within ten years of it, the longest lifetime an option takes.
 * @see RFC 7519 §2 (NumericDate), RFC 3339 §5.6 (four-digit years).
 */
export const LATEST_EXPIRY_MS = 253_402_300_799_000;

/**
 * `now + seconds`, in ms, but never past `LATEST_EXPIRY_MS`: a lifetime that would end later ends then, and the
 * `expires_in` issued with it must say so (issueTokens).
 * @see RFC 6749 §5.1 (`expires_in`), §4.1.2 (codes).
 */
export function expiryAfter(now: number, seconds: number): number {
  return Math.min(now + seconds * 1000, LATEST_EXPIRY_MS);
}
