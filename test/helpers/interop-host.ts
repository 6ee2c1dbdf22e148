// A host for the third-party client tests: the router on a real port, integrations registered without scopes
// (as an integration that knows only SPEC is), and an API route that asks for a scope.
import express from 'express';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { buildClientRecord, registerClient } from '../../src/clients/register-client.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import type { Store } from '../../src/stores/contract.js';
import { createTestUserAuth, REDIRECT_URI, type TestClient } from './app.js';
import { listenLate } from './fetch-browser.js';

/** The protected API route: scoped, so it proves that scope-less integrations get all-access tokens. */
export const API_PATH = '/api/v1/envelopes';
export const API_SCOPE = 'envelopes:read';

/** A running host and what a client needs to know about it. */
export interface InteropHost {
  /** {auth_url}: http://127.0.0.1:PORT */
  readonly url: string;
  /** {legacy_auth_url} (SPEC §9): {auth_url}/legacy */
  readonly legacyUrl: string;
  readonly tokenUrl: string;
  readonly authorizeUrl: string;
  /** The scoped API route's absolute URL. */
  readonly apiUrl: string;
  readonly store: Store;
  /** One entry per token request, in order: whether it authenticated with `Authorization: Basic`. */
  readonly tokenRequests: readonly { readonly basic: boolean }[];
  /** The client_id (as sent, before its colon) of each token request that authenticated with `Authorization: Basic`. */
  readonly basicTokenClientIds: readonly string[];
  /** A new authorization_code integration with no scopes (SPEC §2, §5), registered for `redirectUris`. */
  registerCodeClient(redirectUris?: readonly string[]): Promise<TestClient>;
  /**
   * A new client_credentials integration with no scopes; `legacy`: credentials issued before 2021 (SPEC §9);
   * `importedSecret`: the secret an earlier system issued, with its SHA-256 hash (`clients import` keeps a plaintext
   * one as scrypt: test/compliance/client-auth-rate-limit.test.ts covers that case).
   */
  registerCredentialsClient(options?: { legacy?: boolean; importedSecret?: string }): Promise<TestClient>;
  close(): Promise<void>;
}

/**
 * Starts the router on 127.0.0.1 with a random port, next to `GET /api/v1/envelopes` protected by
 * `requireBearer({ scope: 'envelopes:read' })`, which answers with the token's `req.auth`.
 * @see SPEC §4, RFC 6750 §2.1.
 */
export async function startInteropHost(): Promise<InteropHost> {
  const server = await listenLate();
  const store = createMemoryStore();
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer: server.url,
    legacy: { issuer: `${server.url}/legacy` },
    session: { secret: 'interop-test-session-secret-0123456789' },
    logger: { warn() {}, error() {} },
  });
  const app = express();
  const tokenRequests: { basic: boolean }[] = [];
  const basicTokenClientIds: string[] = [];
  app.post('/oauth2/token', (req, _res, next) => {
    const basic = /^Basic (.*)$/i.exec(req.headers.authorization ?? '');
    tokenRequests.push({ basic: basic !== null });
    if (basic) basicTokenClientIds.push(Buffer.from(basic[1]!, 'base64').toString('latin1').split(':')[0]!);
    next();
  });
  app.use(oauth.router);
  app.get(API_PATH, oauth.requireBearer({ scope: API_SCOPE }), (req, res) => { res.json(req.auth); });
  server.setHandler(app);
  let count = 0;
  const register = async (
    flow: 'authorization_code' | 'client_credentials', redirectUris: readonly string[], legacy = false, importedSecret?: string,
  ): Promise<TestClient> => {
    count += 1;
    const input = {
      name: `Interop ${flow === 'authorization_code' ? 'CRM' : 'Sync'} ${count}`, flow, redirectUris,
      ...(legacy ? { credentialsIssuedAt: new Date('2020-06-01T00:00:00Z') } : {}),
    };
    if (importedSecret !== undefined) {
      const client = buildClientRecord(input, hashSecret(importedSecret));
      await store.clients.createClient!(client);
      return { clientId: client.clientId, clientSecret: importedSecret };
    }
    const { client, clientSecret } = await registerClient(store, input);
    return { clientId: client.clientId, clientSecret };
  };
  return {
    url: server.url,
    legacyUrl: `${server.url}/legacy`,
    tokenUrl: `${server.url}/oauth2/token`,
    authorizeUrl: `${server.url}/oauth2/authorize`,
    apiUrl: `${server.url}${API_PATH}`,
    store,
    tokenRequests,
    basicTokenClientIds,
    registerCodeClient: (redirectUris = [REDIRECT_URI]) => register('authorization_code', redirectUris),
    registerCredentialsClient: (options = {}) => register('client_credentials', [], options.legacy, options.importedSecret),
    async close() {
      await server.close();
      await store.close?.();
    },
  };
}

/** Calls the scoped API route with a bearer token; the status and the JSON body (req.auth) if any. */
export async function callApi(host: InteropHost, accessToken: string): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const res = await fetch(host.apiUrl, { headers: { Authorization: `Bearer ${accessToken}` } });
  const body = res.headers.get('content-type')?.startsWith('application/json') ? (await res.json()) as Record<string, unknown> : null;
  return { status: res.status, body };
}
