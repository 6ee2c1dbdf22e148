// The reference servers of the bench: @node-oauth/oauth2-server and oidc-provider answering the same client_credentials request.
import { createHash, generateKeyPairSync, randomUUID, timingSafeEqual } from 'node:crypto';
import express from 'express';

const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest();

/**
 * @node-oauth/oauth2-server 5 behind Express 5, with an in-memory model doing what our memory store does per
 * token request: look the client up by id, compare the SHA-256 of the presented secret with the stored hash
 * (timing-safe), and save the access token keyed by its SHA-256. The library draws the token (32 random bytes,
 * hex) and validates the grant; the route parses the form with express.urlencoded, as its Express adapter does.
 * @returns {Promise<{ clientId: string, clientSecret: string }>}
 */
export async function mountOAuth2Server(app) {
  const { default: OAuth2Server } = await import('@node-oauth/oauth2-server');
  const { Request, Response } = OAuth2Server;
  const clientId = randomUUID();
  const clientSecret = randomUUID();
  const clients = new Map([[clientId, { id: clientId, secretHash: sha256(clientSecret), grants: ['client_credentials'] }]]);
  const tokens = new Map();
  const model = {
    async getClient(id, secret) {
      const client = clients.get(id);
      if (!client || typeof secret !== 'string' || !timingSafeEqual(sha256(secret), client.secretHash)) return null;
      return client;
    },
    async getUserFromClient(client) {
      return { clientId: client.id };
    },
    async saveToken(token, client, user) {
      const saved = { ...token, client, user };
      tokens.set(sha256(token.accessToken).toString('base64url'), saved);
      return saved;
    },
    async validateScope(_user, _client, scope) {
      return scope ?? [];
    },
  };
  const server = new OAuth2Server({ model, accessTokenLifetime: 3600 });
  app.post('/oauth2/token', express.urlencoded({ extended: false }), async (req, res) => {
    const request = new Request(req);
    const response = new Response(res);
    try {
      await server.token(request, response);
    } catch {
      // the library has already put the error into `response`
    }
    res.set(response.headers).status(response.status).json(response.body);
  });
  return { clientId, clientSecret };
}

/**
 * oidc-provider 9 mounted in Express 5 (provider.callback() at the root, its default /token path moved to
 * /oauth2/token), client_credentials enabled, default in-memory adapter, client_secret_basic. `format`:
 * 'opaque' (no resource indicator: the provider's default opaque token) or 'jwt' (resource indicators with a
 * default resource whose tokens are ES256 JWTs).
 * @returns {Promise<{ clientId: string, clientSecret: string }>}
 */
export async function mountOidcProvider(app, issuer, format) {
  const { default: Provider } = await import('oidc-provider');
  const clientId = randomUUID();
  const clientSecret = randomUUID();
  const resource = 'urn:bench:api';
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const configuration = {
    clients: [{ client_id: clientId, client_secret: clientSecret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic', id_token_signed_response_alg: 'ES256' }],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'ES256' }] },
    routes: { token: '/oauth2/token' },
    scopes: ['bench:read'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      ...(format === 'jwt'
        ? {
          resourceIndicators: {
            enabled: true,
            defaultResource: () => resource,
            useGrantedResource: () => true,
            getResourceServerInfo: () => ({ scope: 'bench:read', audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
          },
        }
        : {}),
    },
  };
  const provider = new Provider(issuer, configuration);
  app.use(provider.callback());
  return { clientId, clientSecret };
}
