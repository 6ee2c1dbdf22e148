// JSON responses with precomputed headers: SPEC §4.2's set on the router's endpoints, no-store alone on the host's routes.
import type { Response } from 'express';
import { answeredByHost } from './answered-by-host.js';

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
 * On a host's own routes (requireBearer's refusals, the health checks) only what the answer itself needs: the host's
 * security headers (HSTS, framing, its helmet's choices) stay as the host set them.
 */
const HOST_ROUTE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Cache-Control', 'no-store'],
  ['Content-Type', 'application/json;charset=UTF-8'],
  // Not a policy a host could have chosen otherwise: the body is JSON, never to be sniffed as anything else.
  ['X-Content-Type-Options', 'nosniff'],
];

function sendJson(
  res: Response, headers: ReadonlyArray<readonly [string, string]>, status: number, body: unknown,
  extraHeaders: ReadonlyArray<readonly [string, string]> | undefined,
): void {
  // A host middleware answered already, or is answering (connect-timeout's 503 for a slow body): see answeredByHost.
  if (answeredByHost(res)) return;
  // A string, not a Buffer: Node then writes the head and the body as one chunk (no copy into a Buffer first).
  const payload = JSON.stringify(body);
  res.removeHeader('X-Powered-By');
  for (const [name, value] of headers) res.setHeader(name, value);
  if (extraHeaders) for (const [name, value] of extraHeaders) res.setHeader(name, value);
  res.setHeader('Content-Length', Buffer.byteLength(payload, 'utf8'));
  res.statusCode = status;
  res.end(payload, 'utf8');
}

/**
 * Writes `body` as JSON with the SPEC §4.2 header set (plus Content-Length) and nothing else of ours: the router's
 * own endpoints (token, revocation, introspection).
 * Bypasses `res.json`, which would rewrite Content-Type to `application/json; charset=utf-8` and add an ETag.
 * @see SPEC §4.2, RFC 6749 §5.1 ("Cache-Control: no-store", "Pragma: no-cache"), §5.2.
 */
export function sendNoStoreJson(res: Response, status: number, body: unknown, extraHeaders?: ReadonlyArray<readonly [string, string]>): void {
  sendJson(res, NO_STORE_HEADERS, status, body, extraHeaders);
}

/**
 * Writes `body` as JSON on a host's route with `Cache-Control: no-store`, Content-Type and `nosniff` only, leaving every
 * security header the host set (HSTS, X-Frame-Options, X-XSS-Protection) as it is: SPEC §4.2's header set belongs to
 * the token endpoint, and an HSTS header there would pin a host that chose none to HTTPS for a year.
 * @see RFC 6750 §3 (the error response), RFC 9111 §5.2.2.5 (no-store).
 */
export function sendHostRouteJson(res: Response, status: number, body: unknown, extraHeaders?: ReadonlyArray<readonly [string, string]>): void {
  sendJson(res, HOST_ROUTE_HEADERS, status, body, extraHeaders);
}
