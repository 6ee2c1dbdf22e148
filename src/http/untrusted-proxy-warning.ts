// Warns once when the app's `trust proxy` setting gets the client's address wrong: every user one source, or each its own pick.
import type { Request } from 'express';
import type { Logger } from '../options.js';

/** Express's compiled `trust proxy` setting: whether the address `hop` steps from the server is a trusted proxy. */
type TrustProxy = (address: string | undefined, hop: number) => boolean;

/**
 * Public addresses no proxy has (RFC 5737 and RFC 3849 documentation ranges), each asked about at a hop: the next two
 * and one a million steps out, past what any X-Forwarded-For line can list. A setting that trusts all of one family
 * trusts whatever a client writes; a hop count (`1`, `3`), `'loopback'`, subnets or the proxies' addresses do not.
 */
const EVERY_HOP_PROBES: ReadonlyArray<ReadonlyArray<readonly [string, number]>> = [
  [['192.0.2.1', 1], ['198.51.100.7', 2], ['203.0.113.9', 1_000_000]],
  [['2001:db8::1', 1], ['2001:db8::2', 2], ['2001:db8::3', 1_000_000]],
];

/** Whether `trust` takes any address at any hop for a proxy (`true`, `() => true`); a setting that throws does not. */
function trustsEveryHop(trust: TrustProxy): boolean {
  try {
    return EVERY_HOP_PROBES.some((probes) => probes.every(([address, hop]) => trust(address, hop) === true));
  } catch {
    return false;
  }
}

/** The check `createUntrustedProxyWarning` returns, run on each request a limit counts. */
export type UntrustedProxyWarning = (req: Request) => void;

/**
 * Returns a check to run on each limited request. One per router, shared by its sign-in and client-authentication
 * limits, so each of two settings logs one warning per router, on the first request of either limit that meets it:
 * - The request carries `X-Forwarded-For` from a peer the app's `trust proxy` setting does not trust: `req.ip` is
 *   then the proxy's address for every user, so the limits count all of them as one source (one attacker's failures
 *   reach everyone's budget). The setting is asked about the peer (its compiled `trust proxy fn`, as `req.ip` asks
 *   it), not merely whether it is set: an address list or function that misses the proxy (`'10.0.0.0/8'` for a proxy
 *   on a Docker bridge) lumps every user together just as no setting does.
 * - The setting trusts every hop (`true`, a function that trusts any address): `req.ip` is then the first address of
 *   the client's own `X-Forwarded-For`, so a client that writes a new one on each request escapes the limits and names
 *   the audit events' `ip`. Safe only behind proxies that each overwrite the header, hence a warning; a hop count
 *   above the number of proxies does the same but cannot be told from a right one, and is not warned about.
 * @see RFC 7239 §5.2 (the forwarded-for address), §8.3 (only as good as the proxies that wrote it), OWASP
 * Authentication Cheat Sheet (per-source throttling).
 */
export function createUntrustedProxyWarning(logger: Logger): UntrustedProxyWarning {
  let warned = false;
  let everyHopWarned = false;
  // The compiled setting last probed: the same function on each request of an app, so the busiest endpoint probes once.
  let probed: TrustProxy | undefined;
  return (req) => {
    if (warned && everyHopWarned) return;
    const trust = req.app.get('trust proxy fn') as TrustProxy | undefined;
    if (!everyHopWarned && trust !== undefined && trust !== probed) {
      probed = trust;
      if (trustsEveryHop(trust)) {
        everyHopWarned = true;
        logger.warn(
          'express-oauth-router: the app\'s trust proxy setting trusts every hop of X-Forwarded-For (true, or a function '
          + 'that trusts any address): a client that writes its own X-Forwarded-For chooses its address, so it escapes the '
          + "sign-in and client-authentication limits and names the audit events' ip. Unless every proxy in front overwrites "
          + "the header, set app.set('trust proxy', <hops or the proxy's address>) in the app the router is mounted in.",
        );
      }
    }
    if (warned || req.headers['x-forwarded-for'] === undefined) return;
    if (trust?.(req.socket.remoteAddress, 0)) return;
    warned = true;
    logger.warn(
      'express-oauth-router: requests carry X-Forwarded-For but the app does not trust the proxy that sent it: every '
      + "client has the proxy's address, so the sign-in and client-authentication limits count all of them as one "
      + "source. Set app.set('trust proxy', <hops or the proxy's address>) in the app the router is mounted in.",
    );
  };
}
