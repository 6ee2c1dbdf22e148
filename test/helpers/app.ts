// A host app for the tests: the router on a fresh memory store, one user, one integration per flow.
import express from 'express';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import type { Store } from '../../src/stores/contract.js';
import type { AuthenticatedUser, UserAuth } from '../../src/user-auth.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { OAuthRouter } from '../../src/types.js';

export const ISSUER = 'http://auth.test';
export const LEGACY_ISSUER = 'http://auth.test/legacy';
export const REDIRECT_URI = 'https://client.example/callback';
export const USER = { username: 'alice', password: 'correct horse battery staple', id: 'user-alice', displayName: 'Alice Example' };

/** Credentials of a registered test integration. */
export interface TestClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** The pieces a test needs. */
export interface TestApp {
  readonly app: express.Express;
  readonly store: Store;
  readonly codeClient: TestClient;
  readonly credentialsClient: TestClient;
  readonly legacyCodeClient: TestClient;
  readonly legacyCredentialsClient: TestClient;
  readonly deletedUsers: Set<string>;
}

/**
 * The test user directory: one user; users can be "deleted" to test findUser. A class whose methods read `this`,
 * as many hosts write theirs, so every test checks that the router calls them on their object.
 */
class TestUserDirectory implements UserAuth {
  private readonly user: AuthenticatedUser = { id: USER.id, displayName: USER.displayName };
  constructor(private readonly deletedUsers: Set<string>) {}
  async verifyCredentials(username: string, password: string): Promise<AuthenticatedUser | null> {
    return username === USER.username && password === USER.password ? this.user : null;
  }
  async findUser(id: string): Promise<AuthenticatedUser | null> {
    return id === USER.id && !this.deletedUsers.has(id) ? this.user : null;
  }
}

export function createTestUserAuth(deletedUsers: Set<string>): UserAuth {
  return new TestUserDirectory(deletedUsers);
}

/** The router alone, for tests that mount it themselves: the test issuer, session secret and a silent logger. */
export function createTestRouter(
  store: Store, options: Partial<OAuthRouterOptions> = {}, userAuth: UserAuth = createTestUserAuth(new Set()),
): OAuthRouter {
  return createOAuthRouter(store, userAuth, {
    issuer: ISSUER,
    session: { secret: 'test-session-secret-0123456789' },
    logger: { warn() {}, error() {} },
    ...options,
  });
}

/** Builds the host app. `options` override the defaults (issuer, legacy). */
export async function createTestApp(options: Partial<OAuthRouterOptions> = {}, store: Store = createMemoryStore()): Promise<TestApp> {
  const deletedUsers = new Set<string>();
  const oauth = createTestRouter(store, { legacy: { issuer: LEGACY_ISSUER }, ...options }, createTestUserAuth(deletedUsers));
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  // requireBearer requires only a scope the vocabulary holds (an OptionsError otherwise): a test whose `scopes` leaves
  // `envelopes:sign` out has no such route.
  const scopes = options.scopes ?? {};
  if (Object.keys(scopes).length === 0 || Object.hasOwn(scopes, 'envelopes:sign')) {
    app.get('/api/v1/sign', oauth.requireBearer({ scope: 'envelopes:sign' }), (_req, res) => { res.json({ ok: true }); });
  }
  const register = async (flow: 'authorization_code' | 'client_credentials', issuedAt?: Date): Promise<TestClient> => {
    const { client, clientSecret } = await registerClient(store, {
      name: flow === 'authorization_code' ? 'Acme CRM' : 'Nightly Sync',
      flow,
      redirectUris: flow === 'authorization_code' ? [REDIRECT_URI, 'http://localhost:8080/cb?tenant=a%20b'] : [],
      allowedScopes: ['envelopes:read', 'envelopes:sign'],
      ...(issuedAt ? { credentialsIssuedAt: issuedAt } : {}),
    });
    return { clientId: client.clientId, clientSecret };
  };
  const legacyDate = new Date('2020-06-01T00:00:00Z');
  return {
    app,
    store,
    codeClient: await register('authorization_code'),
    credentialsClient: await register('client_credentials'),
    legacyCodeClient: await register('authorization_code', legacyDate),
    legacyCredentialsClient: await register('client_credentials', legacyDate),
    deletedUsers,
  };
}

/** `Authorization: Basic` for a client (RFC 6749 §2.3.1: each part form-urlencoded, then Base64). */
export function basic(client: TestClient): string {
  const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64')}`;
}
