// Counter keys of the sign-in and client-authentication limits: who is counted, MACed so no key holds or reveals input.
import { createHash, createHmac, createSecretKey, hkdfSync } from 'node:crypto';
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
 * only make counting stricter). Only ever MACed into a key (`createCounterKey`).
 * @see OWASP Authentication Cheat Sheet (account lockout counts per account).
 */
export function accountOf(username: string): string {
  return username.normalize('NFKC').trim().toLowerCase();
}

/** Makes a counter key: `eor:<kind>:…` for these parts. */
export type CounterKey = (kind: string, ...parts: readonly string[]) => string;

/** HKDF info of the MAC key: the secret it is derived from (a session secret) is never used as it is. */
const KEY_INFO = 'express-oauth-router rate-limit counter keys v1';

/**
 * Counter keys: `eor:<kind>:<base64url HMAC-SHA-256 of the kind and parts>`, 60-odd printable ASCII characters
 * whatever the parts (a megabyte username, a NUL byte). The MAC key is derived (HKDF-SHA-256) from `secret`, which
 * every instance sharing the counters holds (`rateLimitKeySecretOf`), so they still count together, while a key read
 * from the store or an APM span tells nothing: a dictionary of usernames (or of passwords typed in the username
 * field) and addresses needs the secret. The kind is MACed too, so one source's sign-in and client keys do not match.
 *
 * `secret` null (no secret is configured): the unkeyed SHA-256 of the parts, as in 0.2.0, which a dictionary
 * reverses but every instance computes alike. A random key per process would hide them, and make each instance count
 * alone, multiplying every limit by the number of instances; the router warns about it instead (production only).
 * @see RFC 2104 (HMAC), RFC 5869 (HKDF), RateLimitStore (keys hold no secret and no raw input).
 */
export function createCounterKey(secret: string | null): CounterKey {
  if (secret === null) {
    return (kind, ...parts) => `eor:${kind}:${createHash('sha256').update(JSON.stringify(parts)).digest('base64url')}`;
  }
  const key = createSecretKey(Buffer.from(hkdfSync('sha256', secret, '', KEY_INFO, 32)));
  return (kind, ...parts) => `eor:${kind}:${createHmac('sha256', key).update(JSON.stringify([kind, ...parts])).digest('base64url')}`;
}
