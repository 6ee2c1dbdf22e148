// Warns once when requests come through a proxy that Express is not told to trust: every user is then one source.
import type { Request } from 'express';
import type { Logger } from '../options.js';

/**
 * Returns a check to run on each limited request. The first request that carries `X-Forwarded-For` while the
 * app's `trust proxy` setting is off logs one warning: `req.ip` is then the proxy's address for every user,
 * so the limits count all of them as one source (one attacker's failures reach everyone's budget).
 * @see RFC 7239 §5.2 (the forwarded-for address), OWASP Authentication Cheat Sheet (per-source throttling).
 */
export function createUntrustedProxyWarning(logger: Logger): (req: Request) => void {
  let warned = false;
  return (req) => {
    if (warned || req.headers['x-forwarded-for'] === undefined || req.app.get('trust proxy')) return;
    warned = true;
    logger.warn(
      'express-oauth-router: requests carry X-Forwarded-For but the app does not trust its proxy: every client has '
      + "the proxy's address, so the sign-in and client-authentication limits count all of them as one source. "
      + "Set app.set('trust proxy', <hops or the proxy's address>).",
    );
  };
}
