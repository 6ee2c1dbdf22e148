// The request's one Authorization header: two are refused, since proxies and servers disagree on which one counts.
import type { Request } from 'express';
import { InvalidRequestError } from '../errors.js';

const AUTHORIZATION = 'authorization';

/**
 * Whether a header name is `Authorization` in any case, without lowercasing a copy of every name of every
 * request. Header names are ASCII tokens (RFC 9110 §5.1), and for a lowercase letter `c | 0x20` matches only
 * that letter and its capital.
 */
function isAuthorization(name: string): boolean {
  if (name.length !== AUTHORIZATION.length) return false;
  for (let i = 0; i < AUTHORIZATION.length; i += 1) {
    if ((name.charCodeAt(i) | 0x20) !== AUTHORIZATION.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The `Authorization` header, or `undefined` when absent. Node keeps only the first of several in
 * `req.headers`, while a proxy in front may act on the last: a request carrying two is refused rather than
 * resolved either way. Counted on `rawHeaders`, without building `headersDistinct` on every API call.
 * @throws InvalidRequestError when the header appears more than once.
 * @see RFC 9110 §5.3 (a field that is not a list must not be repeated), RFC 6749 §5.2 ("includes multiple
 * credentials" is invalid_request), RFC 6750 §3.1.
 */
export function singleAuthorizationHeader(req: Request): string | undefined {
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (isAuthorization(raw[i]!)) count += 1;
  }
  if (count > 1) throw new InvalidRequestError('the request carries more than one Authorization header');
  return req.headers.authorization;
}
