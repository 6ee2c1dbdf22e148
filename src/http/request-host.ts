// The host (name and port) a request was addressed to, as the host app's `trust proxy` setting says to read it.
import type { Request } from 'express';

type TrustProxy = (address: string | undefined, hop: number) => boolean;

/**
 * The first `X-Forwarded-Host` when the host app trusts the proxy that sent it (its `trust proxy` setting, the rule
 * Express 5's `req.host` applies, and Express 4's `req.hostname` without the port), else the `Host` header. A proxy
 * that rewrites `Host` (nginx's `proxy_pass` does by default) passes the name the client used only there; without
 * `trust proxy` the header is anybody's to send and is ignored.
 * @see RFC 9110 §7.2 (Host), SPEC §9 (two base addresses told apart by host name).
 */
export function requestHost(req: Request): string {
  const forwarded = req.headers['x-forwarded-host'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]!.trim();
  if (first) {
    const trust = req.app?.get('trust proxy fn') as TrustProxy | undefined;
    if (trust?.(req.socket.remoteAddress, 0)) return first;
  }
  return req.headers.host ?? '';
}
