// Warns once when requests come through a proxy that Express is not told to trust: every user is then one source.
import type { Request } from 'express';
import type { Logger } from '../options.js';

/** Express's compiled `trust proxy` setting: whether the address `hop` steps from the server is a trusted proxy. */
type TrustProxy = (address: string | undefined, hop: number) => boolean;

/**
 * Returns a check to run on each limited request. The first request that carries `X-Forwarded-For` from a peer the
 * app's `trust proxy` setting does not trust logs one warning: `req.ip` is then the proxy's address for every user,
 * so the limits count all of them as one source (one attacker's failures reach everyone's budget). The setting is
 * asked about the peer (its compiled `trust proxy fn`, as `req.ip` asks it), not merely whether it is set: an
 * address list or function that misses the proxy (`'10.0.0.0/8'` for a proxy on a Docker bridge) lumps every user
 * together just as no setting does.
 * @see RFC 7239 §5.2 (the forwarded-for address), OWASP Authentication Cheat Sheet (per-source throttling).
 */
export function createUntrustedProxyWarning(logger: Logger): (req: Request) => void {
  let warned = false;
  return (req) => {
    if (warned || req.headers['x-forwarded-for'] === undefined) return;
    const trust = req.app.get('trust proxy fn') as TrustProxy | undefined;
    if (trust?.(req.socket.remoteAddress, 0)) return;
    warned = true;
    logger.warn(
      'express-oauth-router: requests carry X-Forwarded-For but the app does not trust the proxy that sent it: every '
      + "client has the proxy's address, so the sign-in and client-authentication limits count all of them as one "
      + "source. Set app.set('trust proxy', <hops or the proxy's address>) in the app the router is mounted in.",
    );
  };
}
