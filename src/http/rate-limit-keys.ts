// Counter keys of the sign-in and client-authentication limits: who is counted, hashed so no key holds input.
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';

/** IPv6 prefix length counted as one source: a host is usually given a /56 or a /64, and can use all of it. */
const IPV6_SUBNET = 56;

/**
 * The source of a request: `req.ip` (Express: the peer address, or the client address that `trust proxy`
 * lets it read from X-Forwarded-For), an IPv6 address widened to its /56 so that one host cannot rotate
 * through its own addresses. Behind a reverse proxy without `trust proxy`, every request has the proxy's
 * address, and all users share one source.
 * @see RFC 6819 §5.1.4.2.3, OWASP Authentication Cheat Sheet (throttle per source and per account).
 */
export function sourceOf(req: Request): string {
  return ipKeyGenerator(req.ip ?? 'unknown', IPV6_SUBNET);
}

/**
 * The account a sign-in names, as the limits count it: Unicode-normalised (NFKC), trimmed and lower-cased, so
 * `Alice`, `alice ` and `ａｌｉｃｅ` share one counter whatever the host's directory makes of them (merging can
 * only make counting stricter). Only ever hashed (`counterKey`).
 * @see OWASP Authentication Cheat Sheet (account lockout counts per account).
 */
export function accountOf(username: string): string {
  return username.normalize('NFKC').trim().toLowerCase();
}

/**
 * A counter key: `eor:<kind>:<base64url SHA-256 of the parts>`, 60-odd printable ASCII characters whatever
 * the parts (a megabyte username, a NUL byte), and none of them readable from it: usernames, client ids and
 * addresses never reach a store or a log as they were typed.
 * @see RateLimitStore (keys hold no secret and no raw input).
 */
export function counterKey(kind: string, ...parts: readonly string[]): string {
  return `eor:${kind}:${createHash('sha256').update(JSON.stringify(parts)).digest('base64url')}`;
}
