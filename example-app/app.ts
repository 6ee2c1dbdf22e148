// Builds the example signature API: the OAuth router, the envelope API behind it, and the demo callback.
import express, { type Express } from 'express';
import type { Store as SessionStore } from 'express-session';
import helmet from 'helmet';
import { createOAuthRouter, type OAuthRouter, type OAuthRouterOptions, type Store, type UserAuth } from 'express-oauth-router';
import { createOAuthMetrics, type OAuthMetrics } from 'express-oauth-router/metrics';
import type { Registry } from 'prom-client';
import { metricsGuard, type MetricsAccess } from './metrics-access.js';
import { createDemoCallback } from './demo-callback.js';
import { createEnvelopesRouter } from './envelopes.js';
import type { Logger as Pino } from 'pino';
import { logAuditEvents, routerLogger } from './audit-log.js';
import { APP_SCOPES } from './scopes.js';

/** Everything the app needs; server.ts reads it from the environment, tests pass it directly. */
export interface AppOptions {
  readonly store: Store;
  readonly userAuth: UserAuth;
  /** {auth_url}, e.g. http://localhost:3000. */
  readonly authUrl: string;
  /** {legacy_auth_url}; default `${authUrl}/legacy`. */
  readonly legacyAuthUrl?: string;
  /** Signs the login/consent session cookie; without it sessions do not survive a restart. */
  readonly sessionSecret?: string;
  /** Where login/consent sessions live (session-store.ts); default the router's MemorySessionStore (one process). */
  readonly sessionStore?: SessionStore;
  /** Redirect URI of the demo authorization_code integration (its page is served at /demo/callback). */
  readonly demoRedirectUri?: string;
  /**
   * client_id of the demo authorization_code integration, for the curl on the callback page; a function when it is
   * known only later (server.ts seeds once it listens).
   */
  readonly demoCodeClientId?: string | null | (() => string | null);
  /**
   * Express's `trust proxy` (TRUST_PROXY): the hops or addresses of the reverse proxies in front, so that
   * `req.ip` is the client's address. Default unset: clients connect directly.
   */
  readonly trustProxy?: boolean | number | string;
  /** pino logger (audit-log.ts): the router's messages and one JSON line per audit event go there. */
  readonly log?: Pino;
  /** Who may scrape `/metrics` (metrics-access.ts, METRICS_TOKEN / METRICS_LOCAL_ONLY). Default: this machine only. */
  readonly metricsAccess?: MetricsAccess;
  /** The prom-client registry `/metrics` serves (server.ts adds the process metrics to it). Default: a new one. */
  readonly metricsRegistry?: Registry;
  /**
   * The router's scope vocabulary (scopes.ts: OAUTH_SCOPES, which oauth-admin reads too); it must hold the scopes the
   * API requires. Default: the app's own, `APP_SCOPES`.
   */
  readonly scopes?: Readonly<Record<string, string>>;
}

/** The app and the OAuth router inside it. */
export interface App {
  readonly app: Express;
  readonly oauth: OAuthRouter;
  /** The router's Prometheus metrics, served at `/metrics`. */
  readonly metrics: OAuthMetrics;
}

/**
 * Wires the package into an Express app the way a user would: `/oauth2/*` at {auth_url} and, from the
 * legacy issuer's path, `/legacy/oauth2/*`; the API at `/api/v1` behind `requireBearer`.
 * @throws OptionsError (from createOAuthRouter) for a bad AUTH_URL or LEGACY_AUTH_URL.
 */
export function createApp(options: AppOptions): App {
  const authUrl = options.authUrl.replace(/\/+$/, '');
  const routerOptions: OAuthRouterOptions = {
    issuer: authUrl,
    legacy: { issuer: options.legacyAuthUrl ?? `${authUrl}/legacy` },
    session: {
      ...(options.sessionSecret ? { secret: options.sessionSecret } : {}),
      ...(options.sessionStore ? { store: options.sessionStore } : {}),
    },
    productName: 'Acme Sign',
    // The vocabulary: no other scope is granted. Plain words for the consent page, and scopes_supported in the discovery document.
    scopes: options.scopes ?? APP_SCOPES,
    ...(options.log ? { logger: routerLogger(options.log) } : {}),
  };
  // Every store call is timed, the API's too; the router's requests, errors and tokens are counted.
  const metrics = createOAuthMetrics(options.metricsRegistry ? { registry: options.metricsRegistry } : {});
  const store = metrics.instrumentStore(options.store);
  const oauth = createOAuthRouter(store, options.userAuth, routerOptions);
  metrics.observe(oauth);
  if (options.log) logAuditEvents(oauth.events, options.log);
  const app = express();
  app.disable('x-powered-by');
  // No ETags: the API's answers are Cache-Control: no-store (api-headers.ts), so no cache may revalidate them,
  // and res.json would hash every body to make one (BENCHMARKS.md, "Issue 10, fourth pass").
  app.set('etag', false);
  // Before any route: the sign-in and client-authentication limits count per req.ip.
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);

  app.use('/api/v1', createEnvelopesRouter({ oauth, store }));
  // Readiness and liveness for the load balancer or orchestrator; /metrics for Prometheus, guarded.
  app.get('/health/ready', oauth.health.readiness);
  app.get('/health/live', oauth.health.liveness);
  app.get('/metrics', metricsGuard(options.metricsAccess ?? { token: null, localOnly: true }), metrics.handler);
  app.get('/', helmet(), (_req, res) => {
    // Names AUTH_URL's endpoints, which a restart with another AUTH_URL changes: no cache keeps it.
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      name: 'Acme Sign example API',
      authorization_endpoint: `${authUrl}/oauth2/authorize`,
      token_endpoint: `${authUrl}/oauth2/token`,
      api: ['GET /api/v1/envelopes', 'POST /api/v1/envelopes', 'GET /api/v1/me'],
    });
  });
  const redirectUri = options.demoRedirectUri ?? `${authUrl}/demo/callback`;
  app.get(
    '/demo/callback',
    helmet(),
    createDemoCallback({ authUrl, clientId: options.demoCodeClientId ?? null, redirectUri }),
  );
  // The package's router last: it serves its own paths under both issuers and sets its own headers
  // (SPEC §4.2 fixes them byte for byte), so helmet is not put in front of it.
  app.use(oauth.router);
  // Whatever nothing above answered: a JSON 404 as under /api/v1, not Express's HTML page, and no-store, since a
  // shared cache keeps a 404 without Cache-Control (Varnish: 120 s), across the deploy that adds the path.
  app.use((_req, res) => {
    res.status(404).setHeader('Cache-Control', 'no-store').json({ error: 'not_found', error_description: 'no such route' });
  });
  return { app, oauth, metrics };
}
