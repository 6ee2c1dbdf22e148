// Headers that must come once: two are refused, since proxies and servers disagree on which one counts.
import type { Request } from 'express';
import { InvalidRequestError } from '../errors.js';

/**
 * Whether a header name is `lower` in any case, without lowercasing a copy of every name of every request.
 * Header names are ASCII tokens (RFC 9110 §5.1): for a lowercase letter `c | 0x20` matches only that letter and
 * its capital, and `-` (0x2D) is matched exactly since `0x0D | 0x20` is `-` too and CR is no token character.
 */
function isHeaderName(name: string, lower: string): boolean {
  if (name.length !== lower.length) return false;
  for (let i = 0; i < lower.length; i += 1) {
    if ((name.charCodeAt(i) | 0x20) !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Refuses a request that carries the header `lower` more than once. Node keeps only the first of several in
 * `req.headers`, while a proxy in front may act on the last: such a request is refused rather than resolved
 * either way. Counted on `rawHeaders`, without building `headersDistinct` on every request.
 * @throws InvalidRequestError naming the header.
 * @see RFC 9110 §5.3 (a field that is not a list must not be repeated).
 */
export function requireSingleHeader(req: Request, lower: string, name: string): void {
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (isHeaderName(raw[i]!, lower)) count += 1;
  }
  if (count > 1) throw new InvalidRequestError(`the request carries more than one ${name} header`);
}

/**
 * The `Authorization` header, or `undefined` when absent or empty; refused when repeated (`requireSingleHeader`).
 * An empty value (Node strips the whitespace around one) has no auth-scheme, so it carries no credentials: it is
 * no second client authentication method next to `client_secret` in the body, as an empty parameter is omitted
 * (RFC 6749 §3.1), and requireBearer answers it as a request without credentials.
 * @throws InvalidRequestError when the header appears more than once.
 * @see RFC 9110 §5.3, §11.6.2 (credentials start with an auth-scheme), RFC 6749 §2.3, §5.2 ("includes multiple
 *   credentials" is invalid_request), RFC 6750 §3.1.
 */
export function singleAuthorizationHeader(req: Request): string | undefined {
  requireSingleHeader(req, 'authorization', 'Authorization');
  const value = req.headers.authorization;
  return value === '' ? undefined : value;
}
