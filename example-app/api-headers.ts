// The security headers of the JSON API: the few that matter for a token-guarded API, set from one frozen list.
import type { RequestHandler } from 'express';

/**
 * The headers OWASP's REST Security Cheat Sheet asks of an API response. helmet()'s defaults are for HTML
 * pages (a script/style CSP, COOP, CORP, Origin-Agent-Cluster, Referrer-Policy, X-DNS-Prefetch-Control, …):
 * a JSON answer to a bearer client gains nothing from them, and on this route they cost more CPU than the
 * token check (BENCHMARKS.md, "The example app"). The pages (`/`, `/demo/callback`) keep helmet().
 */
const API_HEADERS: ReadonlyArray<readonly [string, string]> = Object.freeze([
  // Answers depend on the token: no shared cache may keep them (RFC 9111 §5.2.2.5).
  ['Cache-Control', 'no-store'],
  // A browser must never run or sniff an API answer as a page, nor frame it.
  ['X-Content-Type-Options', 'nosniff'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
]);

/** Sets API_HEADERS on every answer of the router it is used on, before the bearer check (so 401s carry them too). */
export function apiSecurityHeaders(): RequestHandler {
  return function setApiSecurityHeaders(_req, res, next) {
    for (const [name, value] of API_HEADERS) res.setHeader(name, value);
    next();
  };
}
