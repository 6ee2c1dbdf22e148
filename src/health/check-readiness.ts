// Readiness: can this instance serve OAuth requests right now (store reachable, signing keys loaded)?
import type { Store } from '../stores/contract.js';
import type { KeyRing } from '../jwt/key-ring.js';
import { isStoreUnavailableError } from '../stores/store-unavailable-error.js';
import { checkTimerRange } from '../stores/timer-range.js';

/** Why a check failed: the store said it is unavailable, it did not answer in time, or something else broke. */
export type HealthFailure = 'unavailable' | 'timeout' | 'error';

/** One check's result, as sent on the wire (snake_case keys). */
export interface HealthCheckResult {
  readonly status: 'ok' | 'fail';
  /** Present when `status` is `fail`. Never the error's message: it may name hosts or users. */
  readonly reason?: HealthFailure;
}

/** What `oauth.health.check()` resolves and the readiness handler sends. */
export interface ReadinessReport {
  readonly status: 'ready' | 'not_ready';
  readonly checks: {
    /** A cheap real read (`clients.findClient` of an id no integration has), and the store's `checkReady` if it has one. */
    readonly store: HealthCheckResult;
    /** Only with `accessTokenFormat: 'jwt'`: the signing key is loaded (or loads now). */
    readonly signing_keys?: HealthCheckResult;
  };
}

/** Options of a readiness check. */
export interface ReadinessOptions {
  /** How long each check may take before it counts as failed. Default 2000 ms. */
  readonly timeoutMs?: number;
}

/** The id the store probe looks up: a valid store id that no generated client id looks like. */
export const READINESS_PROBE_CLIENT_ID = 'express-oauth-router:readiness-probe';
const DEFAULT_TIMEOUT_MS = 2000;

/** Settles `work` into a result within `timeoutMs`; a late answer is dropped (and its rejection swallowed). */
function within(work: () => Promise<unknown>, timeoutMs: number): Promise<HealthCheckResult> {
  return new Promise((done) => {
    const timer = setTimeout(() => done({ status: 'fail', reason: 'timeout' }), timeoutMs);
    timer.unref();
    let pending: Promise<unknown>;
    try {
      pending = work();
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      () => done({ status: 'ok' }),
      (err: unknown) => done({ status: 'fail', reason: isStoreUnavailableError(err) ? 'unavailable' : 'error' }),
    ).finally(() => clearTimeout(timer));
  });
}

/**
 * Builds the readiness check of one router. Concurrent calls share one run, so a probe storm costs the
 * store one read at a time. Liveness needs no check: answering at all is the proof.
 * @see DESIGN §2 (the Store), RFC 9068 §4 (signing keys), RFC 6749 §5.2 (`temporarily_unavailable`, which
 * requests get while this reports not ready).
 */
export function createReadinessCheck(store: Store, keyRing: KeyRing | undefined) {
  let running: Promise<ReadinessReport> | null = null;

  async function run(timeoutMs: number): Promise<ReadinessReport> {
    const [storeResult, keysResult] = await Promise.all([
      within(() => (store.checkReady
        ? Promise.all([store.clients.findClient(READINESS_PROBE_CLIENT_ID), store.checkReady()])
        : store.clients.findClient(READINESS_PROBE_CLIENT_ID)), timeoutMs),
      keyRing ? within(() => keyRing.signer(), timeoutMs) : null,
    ]);
    const ready = storeResult.status === 'ok' && (keysResult === null || keysResult.status === 'ok');
    return {
      status: ready ? 'ready' : 'not_ready',
      checks: { store: storeResult, ...(keysResult ? { signing_keys: keysResult } : {}) },
    };
  }

  return function checkReadiness(options: ReadinessOptions = {}): Promise<ReadinessReport> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      return Promise.reject(new TypeError('express-oauth-router: health check timeoutMs must be a positive number'));
    }
    try {
      checkTimerRange('express-oauth-router: health check timeoutMs', timeoutMs, 'milliseconds');
    } catch (err) {
      return Promise.reject(err);
    }
    running ??= run(timeoutMs).finally(() => {
      running = null;
    });
    return running;
  };
}
