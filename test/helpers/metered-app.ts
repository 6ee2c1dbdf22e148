// An Express app with the router over a store, its metrics observing it, and the routes the metrics tests call.
import express from 'express';
import { createOAuthRouter } from '../../src/router.js';
import { registerClient } from '../../src/clients/register-client.js';
import type { OAuthMetrics } from '../../src/metrics/index.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { Store } from '../../src/stores/contract.js';
import type { OAuthRouter } from '../../src/types.js';
import { ISSUER, LEGACY_ISSUER, createTestUserAuth, type TestClient } from './app.js';

/** The app, its router, and a registration of an integration of either flow (with envelopes:read and :sign). */
export interface MeteredApp {
  readonly app: express.Express;
  readonly oauth: OAuthRouter;
  register(flow: 'authorization_code' | 'client_credentials', issuedAt?: Date): Promise<TestClient>;
}

/**
 * The router at both issuers over `store` (give it `metrics.instrumentStore(…)` to time its calls), observed by
 * `metrics`, with `/api/v1/me` (any scope) and `/api/v1/sign` (envelopes:sign) behind requireBearer, and `/metrics`.
 */
export function meteredApp(store: Store, metrics: OAuthMetrics, options: Partial<OAuthRouterOptions> = {}): MeteredApp {
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer: ISSUER, legacy: { issuer: LEGACY_ISSUER }, session: { secret: 'test-session-secret-0123456789' },
    logger: { warn() {}, error() {} }, ...options,
  });
  metrics.observe(oauth);
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  app.get('/api/v1/sign', oauth.requireBearer({ scope: 'envelopes:sign' }), (_req, res) => { res.json({ ok: true }); });
  app.get('/metrics', metrics.handler);
  return {
    app, oauth,
    async register(flow, issuedAt) {
      const { client, clientSecret } = await registerClient(store, {
        name: 'Metered', flow, redirectUris: flow === 'authorization_code' ? ['https://client.example/callback'] : [],
        allowedScopes: ['envelopes:read', 'envelopes:sign'], ...(issuedAt ? { credentialsIssuedAt: issuedAt } : {}),
      });
      return { clientId: client.clientId, clientSecret };
    },
  };
}
