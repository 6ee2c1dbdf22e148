// The host (name and port) a request was addressed to, as the host app's `trust proxy` setting says to read it.
import type { Request } from 'express';

type TrustProxy = (address: string | undefined, hop: number) => boolean;

/**
 * The authority of an absolute-form request target (`POST http://host/oauth2/token HTTP/1.1`), without userinfo: up to
 * the authority's last `@`, as WHATWG URL reads `http://a@b@c/` (host `c`).
 */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#]*@)?([^/?#@]*)/i;

/**
 * The first `X-Forwarded-Host` when the host app trusts the proxy that sent it (its `trust proxy` setting, the rule
 * Express 5's `req.host` applies, and Express 4's `req.hostname` without the port); else, for a request target in
 * absolute form, its authority, which an origin server MUST use in place of `Host` (RFC 9112 §3.2.2); else the
 * `Host` header. A proxy that rewrites `Host` (nginx's `proxy_pass` does by default) passes the name the client used
 * only in `X-Forwarded-Host`; without `trust proxy` that header is anybody's to send and is ignored.
 * @see RFC 9110 §7.2 (Host), RFC 9112 §3.2.2, SPEC §9 (two base addresses told apart by host name).
 */
export function requestHost(req: Request): string {
  const forwarded = req.headers['x-forwarded-host'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]!.trim();
  if (first) {
    const trust = req.app?.get('trust proxy fn') as TrustProxy | undefined;
    if (trust?.(req.socket.remoteAddress, 0)) return first;
  }
  // Origin form (`/oauth2/token`), what nearly every client sends, is told apart by its first character.
  const target = req.originalUrl ?? req.url ?? '';
  if (target.charCodeAt(0) !== 0x2f) {
    const authority = ABSOLUTE_FORM.exec(target)?.[1];
    if (authority) return authority;
  }
  return req.headers.host ?? '';
}
