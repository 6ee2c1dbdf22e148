// Who may scrape /metrics: holders of METRICS_TOKEN, and/or only this machine (METRICS_LOCAL_ONLY).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';

/** The /metrics guard's setting, from the environment. */
export interface MetricsAccess {
  /** A bearer token the scraper must present (`Authorization: Bearer …`); `null`: none needed. */
  readonly token: string | null;
  /** Only requests from this machine (loopback), never one forwarded by a proxy for somebody else. */
  readonly localOnly: boolean;
}

/**
 * METRICS_TOKEN and METRICS_LOCAL_ONLY → the guard's setting. Without a token, localhost only (the safe
 * default); with one, from anywhere with the token, unless METRICS_LOCAL_ONLY=true asks for both.
 * METRICS_LOCAL_ONLY=false without a token serves /metrics to anybody: only for a private network.
 * @throws TypeError for a METRICS_LOCAL_ONLY that is not true or false, or a token under 16 characters.
 */
export function parseMetricsAccess(token: string | undefined, localOnly: string | undefined): MetricsAccess {
  if (localOnly !== undefined && localOnly !== 'true' && localOnly !== 'false') {
    throw new TypeError(`METRICS_LOCAL_ONLY must be true or false, got ${JSON.stringify(localOnly)}`);
  }
  if (token !== undefined && token.length < 16) throw new TypeError('METRICS_TOKEN must be at least 16 characters');
  return { token: token ?? null, localOnly: localOnly === undefined ? token === undefined : localOnly === 'true' };
}

function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const plain = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

/**
 * True for a request made on this machine: the connection comes from loopback and so does the client as
 * `trust proxy` resolves it (`req.ip`). Without `trust proxy`, a request carrying forwarding headers came
 * through a proxy on this machine for somebody else, so it is not local either.
 */
function isLocal(req: Request): boolean {
  if (!isLoopback(req.socket.remoteAddress) || !isLoopback(req.ip)) return false;
  const trusted = Boolean(req.app.get('trust proxy'));
  return trusted || (req.headers['x-forwarded-for'] === undefined && req.headers.forwarded === undefined);
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * The guard in front of `metrics.handler`: 403 for a request that is not local when `localOnly`, 401 with a
 * Bearer challenge for a missing or wrong token when one is set. Tokens are compared in constant time (as
 * SHA-256 digests, so their lengths leak nothing either).
 */
export function metricsGuard(access: MetricsAccess): RequestHandler {
  const expected = access.token === null ? null : digest(access.token);
  return (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    if (access.localOnly && !isLocal(req)) {
      res.status(403).json({ error: 'forbidden', error_description: '/metrics is served to this machine only' });
      return;
    }
    if (expected !== null) {
      const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
      if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
        res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        res.status(401).json({ error: 'unauthorized', error_description: '/metrics needs the METRICS_TOKEN bearer token' });
        return;
      }
    }
    next();
  };
}
