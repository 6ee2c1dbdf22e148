// The readiness and liveness handlers a host mounts for its load balancer or orchestrator.
import type { Request, RequestHandler, Response } from 'express';
import type { Store } from '../stores/contract.js';
import type { KeyRing } from '../jwt/key-ring.js';
import { sendHostRouteJson } from '../http/json-response.js';
import { logStoreAvailable, storeOutageOf, type OutageSource } from '../http/store-outage-log.js';
import { createReadinessCheck, type ReadinessOptions, type ReadinessReport } from './check-readiness.js';

/** `oauth.health`: the checks behind `/health/ready` and `/health/live`, wherever the host mounts them. */
export interface OAuthHealth {
  /** Runs the readiness checks (store reachable; with JWT access tokens, signing keys loaded). */
  check(options?: ReadinessOptions): Promise<ReadinessReport>;
  /** 200 `{"status":"ready",…}` or 503 `{"status":"not_ready",…}` naming the failing check. 2 s per check. */
  readonly readiness: RequestHandler;
  /** 200 `{"status":"ok"}` while the process answers; touches no store, so an outage never restarts it. */
  readonly liveness: RequestHandler;
}

/**
 * Builds `oauth.health` for one router. Both answer JSON with `Cache-Control: no-store` (SPEC §4.2 header
 * set), so no cache between the prober and the app serves an old verdict. Readiness answers 503 while the
 * store is down: a load balancer then sends traffic elsewhere, and the token endpoint's own answers would be
 * 503 `temporarily_unavailable` anyway (RFC 6749 §5.2). Liveness stays 200: restarting the process would not
 * bring the database back.
 * @see RFC 9110 §15.6.4 (503 Service Unavailable), RFC 9111 §5.2.2.5 (no-store).
 */
export function createHealth(store: Store, keyRing: KeyRing | undefined, source: OutageSource): OAuthHealth {
  const { logger } = source;
  const check = createReadinessCheck(store, keyRing);
  // Its store's outage log (the router's own, not the process's): whether a probe that reached the store ends an outage.
  const storeOutage = storeOutageOf(source);
  return {
    check,
    readiness(_req: Request, res: Response): Promise<void> {
      return check().then(
        (report) => {
          // A probe that reached the store says an outage's end even with no traffic routed here yet.
          if (storeOutage.pending && report.checks.store.status === 'ok') logStoreAvailable(source);
          sendHostRouteJson(res, report.status === 'ready' ? 200 : 503, report);
        },
        (err: unknown) => {
          logger.error(`express-oauth-router: readiness check failed: ${(err as Error)?.message ?? String(err)}`);
          sendHostRouteJson(res, 503, { status: 'not_ready' });
        },
      );
    },
    liveness(_req: Request, res: Response): void {
      sendHostRouteJson(res, 200, { status: 'ok' });
    },
  };
}
