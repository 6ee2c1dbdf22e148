// Token-endpoint style JSON responses with exactly the headers of SPEC §4.2, precomputed once.
import type { Response } from 'express';

// SPEC §4.2 lists these values byte for byte; RFC 6749 §5.1 requires no-store and Pragma: no-cache.
const NO_STORE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Pragma', 'no-cache'],
  ['Expires', '0'],
  ['Cache-Control', 'no-cache, no-store, max-age=0, must-revalidate'],
  ['X-Frame-Options', 'DENY'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-XSS-Protection', '1; mode=block'],
  ['Strict-Transport-Security', 'max-age=31536000 ; includeSubDomains'],
  ['Content-Type', 'application/json;charset=UTF-8'],
];

/**
 * Writes `body` as JSON with the SPEC §4.2 header set (plus Content-Length) and nothing else of ours.
 * Bypasses `res.json`, which would rewrite Content-Type to `application/json; charset=utf-8` and add an ETag.
 * @see SPEC §4.2, RFC 6749 §5.1 ("Cache-Control: no-store", "Pragma: no-cache"), §5.2.
 */
export function sendNoStoreJson(
  res: Response,
  status: number,
  body: unknown,
  extraHeaders?: ReadonlyArray<readonly [string, string]>,
): void {
  // A string, not a Buffer: Node then writes the head and the body as one chunk (no copy into a Buffer first).
  const payload = JSON.stringify(body);
  res.removeHeader('X-Powered-By');
  for (const [name, value] of NO_STORE_HEADERS) res.setHeader(name, value);
  if (extraHeaders) for (const [name, value] of extraHeaders) res.setHeader(name, value);
  res.setHeader('Content-Length', Buffer.byteLength(payload, 'utf8'));
  res.statusCode = status;
  res.end(payload, 'utf8');
}
