// The router under test on a store, listening, with the resource-server client and how a sequence administers it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createOAuthAdmin } from '../../../src/admin/create-oauth-admin.js';
import { withdrawConsent } from '../../../src/consents/withdraw-consent.js';
import { createOAuthRouter } from '../../../src/router.js';
import type { Store } from '../../../src/stores/contract.js';
import type { OAuthRouter } from '../../../src/types.js';
import type { UserAuth } from '../../../src/user-auth.js';
import type { Lifetimes, Real } from './model.js';
import { PASSWORD, READ, RESOURCE_SERVER, SIGN } from './settings.js';
import { fact } from './tally.js';

/** Any user `m-…` signs in with PASSWORD; each sequence has users of its own, so consents never carry over. */
const userAuth: UserAuth = {
  async verifyCredentials(username, password) {
    return username.startsWith('m-') && password === PASSWORD ? { id: username, displayName: username } : null;
  },
  async findUser(id) {
    return id.startsWith('m-') ? { id, displayName: id } : null;
  },
};

/** What the router logged as errors: an unexpected error is a defect even when its answer was not a 5xx. */
export const errors: string[] = [];

/** The router under test, listening, and how a sequence administers it. */
export interface Harness {
  readonly base: string;
  readonly oauth: OAuthRouter;
  readonly rs: { clientId: string; secret: string };
  readonly administer: Real['administer'];
  close(): Promise<void>;
}

/** How long a second instance's revocation may take to reach this one's feed before the model stops waiting. */
const FEED_WAIT_MS = 1000;

/**
 * `served`: the store the router under test uses; `administered`: the one administrative operations use (the same, or
 * another instance's). `feedLag`: whether another instance's revocation reaches this one's feed only once notified
 * (PostgreSQL, Redis); on SQLite it must count on the next request, unwaited.
 */
export async function startHarness(served: Store, administered: Store, label: string, port: number, ttl: Lifetimes, feedLag: boolean, format: 'opaque' | 'jwt'): Promise<Harness> {
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rsId = `${RESOURCE_SERVER}-${label}-${process.pid}-${Date.now().toString(36)}`;
  const oauth = createOAuthRouter(served, userAuth, {
    issuer: base,
    session: { secret: 'model-session-secret-0123456789' },
    logger: { warn() {}, error: (message: string) => { errors.push(message); } },
    accessTokenTtl: ttl.access,
    ...(format === 'jwt' ? { accessTokenFormat: 'jwt' as const, jwt: { checkRevocation: true } } : {}),
    refreshTokenTtl: ttl.refresh,
    authorizationCodeTtl: ttl.code,
    introspectionClients: [rsId],
    scopes: { [READ]: 'See your envelopes', [SIGN]: 'Sign envelopes' },
    // Every sequence presents wrong secrets on purpose: the flood limit (tested elsewhere) would answer 429.
    clientAuthRateLimit: false,
  });
  const app = express();
  app.use(oauth.router);
  app.get('/api/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  app.get('/api/sign', oauth.requireBearer({ scope: SIGN }), (req, res) => { res.json(req.auth); });
  server.on('request', app);
  const { clientSecret } = await oauth.admin.createClient({ name: 'Resource server', flow: 'client_credentials', clientId: rsId });
  let administer: Real['administer'] = (op) => op(oauth.admin, (userId, clientId) => oauth.withdrawConsent(userId, clientId));
  if (administered !== served) {
    const admin = createOAuthAdmin(administered);
    administer = async (op, revokes) => {
      const before = served.revocations?.mark() ?? null;
      const result = await op(admin, (userId, clientId) => withdrawConsent(administered, userId, clientId));
      if (revokes && feedLag) {
        const waitFrom = Date.now();
        const deadline = Date.now() + FEED_WAIT_MS;
        while (Date.now() < deadline) {
          const now = served.revocations?.mark() ?? null;
          if (now !== null && now !== before) break;
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        if (Date.now() >= deadline) fact(`revocation feed did not move within ${FEED_WAIT_MS} ms`);
        else fact(`revocation feed moved within ${[2, 10, 50, 200, FEED_WAIT_MS].find((ms) => Date.now() - waitFrom <= ms)} ms`);
      }
      return result;
    };
  }
  return {
    base, oauth, rs: { clientId: rsId, secret: clientSecret }, administer,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
