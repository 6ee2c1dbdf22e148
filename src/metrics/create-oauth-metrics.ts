// Prometheus metrics of one or more routers: prom-client collectors fed by diagnostics channels and audit events.
import * as diagnosticsChannel from 'node:diagnostics_channel';
import type { Request, RequestHandler, Response } from 'express';
import type { Registry } from 'prom-client';
import type { Store } from '../stores/contract.js';
import type { OAuthRouter } from '../types.js';
import type { OAuthEvents } from '../events/oauth-events.js';
import type { OAuthEventOf } from '../events/event-types.js';
import {
  DIAGNOSTICS_CHANNELS, type BcryptWorkerFailureMessage, type BcryptWorkerFailureReason, type BearerCheckMessage,
  type ErrorAnswerMessage, type TokenRequestMessage,
} from './channels.js';
import { instrumentStore } from './instrument-store.js';
import { loadPromClient } from './load-prom-client.js';
import { answeredByHost } from '../http/answered-by-host.js';

/** Histogram buckets, in seconds, per histogram: finite upper bounds in strictly increasing order (`+Inf` is added). */
export interface OAuthMetricsBuckets {
  readonly tokenRequest?: readonly number[];
  readonly bearerCheck?: readonly number[];
  readonly storeCall?: readonly number[];
}

/** Options of `createOAuthMetrics`. */
export interface OAuthMetricsOptions {
  /** The host's prom-client registry, so these metrics join its own. Default: a new `Registry`. */
  readonly registry?: Registry;
  /** Put before every metric name: letters, digits and `_`, no colon (reserved for recording rules). Default `oauth_`. */
  readonly prefix?: string;
  readonly buckets?: OAuthMetricsBuckets;
}

/** What `createOAuthMetrics` returns. */
export interface OAuthMetrics {
  /** The registry the metrics are in (the host's, or the one made for them). */
  readonly registry: Registry;
  /** Counts and times what `oauth` does from now on. Call once per router; returns `this`. */
  observe(oauth: OAuthRouter): OAuthMetrics;
  /**
   * The same Store, every call of every part (but `revocations.mark`) timed: pass the result to
   * `createOAuthRouter` (and anything else that should be measured).
   */
  instrumentStore<S extends Store>(store: S): S;
  /** Answers the registry in the Prometheus text format (its `contentType`), `Cache-Control: no-store`. */
  readonly handler: RequestHandler;
  /** Stops observing every router and takes the metrics out of the registry. */
  close(): void;
}

const DEFAULT_BUCKETS = {
  tokenRequest: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  // A cached bearer check takes microseconds; a store lookup, milliseconds. From 10 µs: with 100 µs first, an outside
  // run with a real Prometheus found 65 % of successful checks in the first bucket, its median a guess within it.
  bearerCheck: [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  // From 50 µs: a SQLite lookup takes tens of µs (98.6 % of them fell in a first bucket of 0.5 ms).
  storeCall: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
} as const;

// A metric name's characters but the colon, which Prometheus reserves for recording rules (its naming practices):
// promtool check metrics flags every name that has one.
const PREFIX = /^([a-zA-Z_][a-zA-Z0-9_]*)?$/;

/**
 * The buckets of each histogram: the defaults, overridden by the host's lists (a key given as `undefined` keeps its
 * default). prom-client takes any list as it is: an unsorted one counts an observation under a lower bound it
 * exceeds (Prometheus then read a median of 0.3 s as 0.05 s), a repeated bound exposes one series twice (Prometheus
 * keeps the first, and +Inf falls below the next bound), and
 * Infinity or NaN becomes an `le` that histogram_quantile reads as a bucket, so those are refused here.
 * @throws TypeError naming the option of a list that is not finite numbers in strictly increasing order.
 */
function resolveBuckets(given: OAuthMetricsBuckets | undefined): Record<keyof typeof DEFAULT_BUCKETS, readonly number[]> {
  const buckets: Record<keyof typeof DEFAULT_BUCKETS, readonly number[]> = { ...DEFAULT_BUCKETS };
  for (const key of Object.keys(DEFAULT_BUCKETS) as Array<keyof typeof DEFAULT_BUCKETS>) {
    const list: unknown = given?.[key];
    if (list === undefined) continue;
    const valid = Array.isArray(list) && list.every((bound: unknown, i) =>
      typeof bound === 'number' && Number.isFinite(bound) && (i === 0 || bound > (list[i - 1] as number)));
    if (!valid) {
      throw new TypeError(`express-oauth-router/metrics: buckets.${key} must be finite numbers in strictly increasing order (seconds; +Inf is added), got ${Array.isArray(list) ? `[${list.join(', ')}]` : String(list)}`);
    }
    buckets[key] = list as readonly number[];
  }
  return buckets;
}

/** The metric names, after the prefix. */
const NAMES = {
  tokensIssued: 'tokens_issued_total',
  errors: 'errors_total',
  tokenRequests: 'token_request_duration_seconds',
  bearerChecks: 'bearer_check_duration_seconds',
  bearerCache: 'bearer_cache_requests_total',
  rateLimitHits: 'rate_limit_hits_total',
  storeCalls: 'store_call_duration_seconds',
  storeErrors: 'store_errors_total',
  bcryptWorkerFailures: 'bcrypt_worker_failures_total',
} as const;

const BCRYPT_WORKER_FAILURE_REASONS: readonly BcryptWorkerFailureReason[] = ['crash', 'hang', 'start_failed'];

/**
 * Prometheus metrics of the authorization server (prom-client 15). Counters and histograms, all labels from
 * bounded sets (never a client id, user id or token):
 * - `oauth_tokens_issued_total{grant_type,issuer}`: `token.issued` and `token.refreshed` events;
 * - `oauth_errors_total{endpoint,error,status}`: OAuth error answers (`endpoint`: authorization, token,
 *   revocation, introspection, bearer; `error`: the RFC code, or `missing_token` for a bearer request without
 *   one; `status`: the HTTP status, 302 for an error redirected to the client, so 429 and 503
 *   `temporarily_unavailable` stay apart);
 * - `oauth_token_request_duration_seconds{grant_type,outcome}` and
 *   `oauth_bearer_check_duration_seconds{outcome}` (histograms);
 * - `oauth_bearer_cache_requests_total{result}`: `requireBearer` decisions on a well-formed Bearer token, `hit` when
 *   the router's memory decided (the bearer cache, or the JWT verifier's memory), `miss` when a store lookup or a
 *   signature verification did: `hit / (hit + miss)` is the cache's hit ratio;
 * - `oauth_rate_limit_hits_total{limit}`: `rate_limit.hit` events (`login`, `client_authentication`);
 * - `oauth_store_call_duration_seconds{part,method,outcome}` and `oauth_store_errors_total{part,method,reason}`
 *   for a store passed through `instrumentStore`;
 * - `oauth_bcrypt_worker_failures_total{reason}`: the worker thread that checks imported bcrypt secrets failed with
 *   checks under way (`crash`, `hang`, `start_failed`), each of them answered 500; process-wide (one worker serves
 *   every router), counted once per metrics however many routers it observes.
 * Timings come from `node:diagnostics_channel`, which the router only feeds while subscribed, so a host that
 * does not create metrics pays nothing for them.
 * @throws Error naming prom-client when it is not installed; TypeError for a bad prefix (one with a colon too) or
 * bad buckets (not finite and strictly increasing); prom-client's Error when a metric of the same name is already in
 * the registry.
 * @see RFC 6749 §5.2, RFC 6750 §3.1 (the error codes counted), DESIGN §2 (the Store).
 * @example
 * const metrics = createOAuthMetrics({ registry });
 * const oauth = createOAuthRouter(metrics.instrumentStore(store), userAuth, options);
 * metrics.observe(oauth);
 * app.get('/metrics', onlyFromLocalhost, metrics.handler);
 */
export function createOAuthMetrics(options: OAuthMetricsOptions = {}): OAuthMetrics {
  const prefix = options.prefix ?? 'oauth_';
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new TypeError(`express-oauth-router/metrics: prefix must be a Prometheus metric name prefix ([a-zA-Z_][a-zA-Z0-9_]*, no colon: colons are for recording rules), got ${JSON.stringify(prefix)}`);
  }
  const buckets = resolveBuckets(options.buckets);
  const prom = loadPromClient();
  const registry = options.registry ?? new prom.Registry();
  const registers = [registry];

  const tokensIssued = new prom.Counter({
    name: `${prefix}${NAMES.tokensIssued}`, help: 'Access tokens issued by the token endpoint, by grant type and issuer.',
    labelNames: ['grant_type', 'issuer'] as const, registers,
  });
  const errors = new prom.Counter({
    name: `${prefix}${NAMES.errors}`, help: 'OAuth error answers, by endpoint, error code and HTTP status.',
    labelNames: ['endpoint', 'error', 'status'] as const, registers,
  });
  const tokenRequests = new prom.Histogram({
    name: `${prefix}${NAMES.tokenRequests}`, help: 'Token endpoint requests, by grant type and outcome.',
    labelNames: ['grant_type', 'outcome'] as const, buckets: [...buckets.tokenRequest], registers,
  });
  const bearerChecks = new prom.Histogram({
    name: `${prefix}${NAMES.bearerChecks}`, help: 'requireBearer decisions, by outcome.',
    labelNames: ['outcome'] as const, buckets: [...buckets.bearerCheck], registers,
  });
  const bearerCache = new prom.Counter({
    name: `${prefix}${NAMES.bearerCache}`,
    help: 'requireBearer decisions on a Bearer token, by result: hit (the bearer cache or the JWT verifier\'s memory decided) or miss (a store lookup or a signature verification did).',
    labelNames: ['result'] as const, registers,
  });
  const rateLimitHits = new prom.Counter({
    name: `${prefix}${NAMES.rateLimitHits}`, help: 'Requests refused by a rate limit, by limit.',
    labelNames: ['limit'] as const, registers,
  });
  const storeCalls = new prom.Histogram({
    name: `${prefix}${NAMES.storeCalls}`, help: 'Store calls, by part, method and outcome.',
    labelNames: ['part', 'method', 'outcome'] as const, buckets: [...buckets.storeCall], registers,
  });
  const storeErrors = new prom.Counter({
    name: `${prefix}${NAMES.storeErrors}`, help: 'Store calls that failed, by part, method and reason (unavailable or error).',
    labelNames: ['part', 'method', 'reason'] as const, registers,
  });
  const bcryptWorkerFailures = new prom.Counter({
    name: `${prefix}${NAMES.bcryptWorkerFailures}`,
    help: 'Worker threads checking imported bcrypt client secrets that failed with checks under way, by reason (crash, hang, start_failed).',
    labelNames: ['reason'] as const, registers,
  });

  const sources = new Set<OAuthEvents>();
  const onTokenRequest = (message: unknown): void => {
    const m = message as TokenRequestMessage;
    if (sources.has(m.source)) tokenRequests.observe({ grant_type: m.grantType, outcome: m.outcome }, m.seconds);
  };
  // requireBearer is the hottest path: its two series are looked up once, not per request.
  const bearerSeries = { success: bearerChecks.labels({ outcome: 'success' }), error: bearerChecks.labels({ outcome: 'error' }) };
  const cacheSeries = { hit: bearerCache.labels({ result: 'hit' }), miss: bearerCache.labels({ result: 'miss' }) };
  const onBearerCheck = (message: unknown): void => {
    const m = message as BearerCheckMessage;
    if (!sources.has(m.source)) return;
    bearerSeries[m.outcome].observe(m.seconds);
    if (m.cache !== null) cacheSeries[m.cache].inc();
  };
  const onErrorAnswer = (message: unknown): void => {
    const m = message as ErrorAnswerMessage;
    if (sources.has(m.source)) errors.inc({ endpoint: m.endpoint, error: m.error, status: String(m.status) });
  };
  // Process-wide, not one router's: counted while any router is observed (the channel is subscribed to only then).
  const onBcryptWorkerFailure = (message: unknown): void => {
    bcryptWorkerFailures.inc({ reason: (message as BcryptWorkerFailureMessage).reason });
  };
  const onIssued = (event: OAuthEventOf<'token.issued'> | OAuthEventOf<'token.refreshed'>): void => {
    tokensIssued.inc({ grant_type: event.grantType, issuer: event.issuer ?? '' });
  };
  const onRateLimitHit = (event: OAuthEventOf<'rate_limit.hit'>): void => {
    rateLimitHits.inc({ limit: event.limit });
  };
  const channels: Array<[string, (message: unknown) => void]> = [
    [DIAGNOSTICS_CHANNELS.tokenRequest, onTokenRequest],
    [DIAGNOSTICS_CHANNELS.bearerCheck, onBearerCheck],
    [DIAGNOSTICS_CHANNELS.errorAnswer, onErrorAnswer],
    [DIAGNOSTICS_CHANNELS.bcryptWorkerFailure, onBcryptWorkerFailure],
  ];
  let subscribed = false;

  const metrics: OAuthMetrics = {
    registry,
    observe(oauth: OAuthRouter): OAuthMetrics {
      const events = oauth.events;
      if (sources.has(events)) return metrics;
      sources.add(events);
      events.on('token.issued', onIssued);
      events.on('token.refreshed', onIssued);
      events.on('rate_limit.hit', onRateLimitHit);
      // Every series a dashboard expects starts at 0, so rate() sees the first token.
      for (const issuer of [oauth.options.main, ...(oauth.options.legacy ? [oauth.options.legacy] : [])]) {
        for (const grantType of ['authorization_code', 'client_credentials', 'refresh_token']) {
          tokensIssued.inc({ grant_type: grantType, issuer: issuer.issuer }, 0);
        }
      }
      for (const limit of ['login', 'client_authentication']) rateLimitHits.inc({ limit }, 0);
      for (const reason of BCRYPT_WORKER_FAILURE_REASONS) bcryptWorkerFailures.inc({ reason }, 0);
      if (!subscribed) {
        subscribed = true;
        for (const [name, listener] of channels) diagnosticsChannel.subscribe(name, listener);
      }
      return metrics;
    },
    instrumentStore<S extends Store>(store: S): S {
      return instrumentStore(store, (part, method, outcome, seconds) => {
        storeCalls.observe({ part, method, outcome }, seconds);
        if (outcome !== 'ok') storeErrors.inc({ part, method, reason: outcome });
      });
    },
    handler(_req: Request, res: Response): Promise<void> {
      // Written by this package on the host's route, as the health checks are: it names no framework either.
      res.removeHeader('X-Powered-By');
      // A host's request timeout may answer while a collect function is slow (connect-timeout's 503): write nothing then,
      // since a header set after the answer throws, and under Express 4, which ignores this promise, ends the process.
      return registry.metrics().then(
        (text) => {
          if (answeredByHost(res)) return;
          res.statusCode = 200;
          res.setHeader('Content-Type', registry.contentType);
          res.setHeader('Cache-Control', 'no-store');
          res.end(text);
        },
        () => {
          if (answeredByHost(res)) return;
          res.statusCode = 500;
          res.setHeader('Cache-Control', 'no-store');
          res.end();
        },
      );
    },
    close(): void {
      if (subscribed) {
        subscribed = false;
        for (const [name, listener] of channels) diagnosticsChannel.unsubscribe(name, listener);
      }
      for (const events of sources) {
        events.off('token.issued', onIssued);
        events.off('token.refreshed', onIssued);
        events.off('rate_limit.hit', onRateLimitHit);
      }
      sources.clear();
      for (const name of Object.values(NAMES)) registry.removeSingleMetric(`${prefix}${name}`);
    },
  };
  return metrics;
}
