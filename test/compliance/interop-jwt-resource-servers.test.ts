// Interoperability: resource servers nobody here wrote (oauth4webapi's validateJwtAccessToken, jose's jwtVerify with a
// remote JWK Set) validate the RFC 9068 access tokens and introspect them (RFC 7662), configured from discovery alone.
import { generateKeyPairSync } from 'node:crypto';
import express from 'express';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { REDIRECT_URI, USER, createTestRouter, type TestClient } from '../helpers/app.js';
import { browseAuthorization, listenLate, type LateServer } from '../helpers/fetch-browser.js';
import { decodeJwt } from '../helpers/jwt.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { PUBLICATION_DELAY_MS } from '../../src/jwt/store-key-ring.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { OAuthRouter } from '../../src/types.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
/** What RFC 9068 §2.2 makes REQUIRED, as a resource server's library is told to require it. */
const REQUIRED_CLAIMS = ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'];
const SCOPE = 'envelopes:read envelopes:sign';

/** The router on a real port with JWT access tokens, its integrations, and two resource servers allowed to introspect. */
interface JwtHost {
  readonly url: string;
  readonly oauth: OAuthRouter;
  /** GETs of either JWK Set so far: proves that a validator answered from its cache. */
  jwksFetches(): number;
  readonly clients: Readonly<Record<'code' | 'credentials' | 'legacyCode' | 'legacyCredentials' | 'resourceServer' | 'legacyResourceServer', TestClient>>;
  close(): Promise<void>;
}

async function startHost(options: Partial<OAuthRouterOptions> = {}): Promise<JwtHost> {
  const server: LateServer = await listenLate();
  const store = createMemoryStore();
  const legacyDate = new Date('2020-06-01T00:00:00Z');
  const register = async (flow: 'authorization_code' | 'client_credentials', legacy: boolean, scoped = true): Promise<TestClient> => {
    const { client, clientSecret } = await registerClient(store, {
      name: `${flow} ${legacy ? 'legacy' : 'main'}`, flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [],
      ...(scoped ? { allowedScopes: SCOPE.split(' ') } : {}), ...(legacy ? { credentialsIssuedAt: legacyDate } : {}),
    });
    return { clientId: client.clientId, clientSecret };
  };
  const clients = {
    code: await register('authorization_code', false), credentials: await register('client_credentials', false),
    legacyCode: await register('authorization_code', true), legacyCredentials: await register('client_credentials', true),
    // A resource server authenticates at the introspection endpoint like any integration (README, introspectionClients).
    resourceServer: await register('client_credentials', false, false), legacyResourceServer: await register('client_credentials', true, false),
  };
  const router = createTestRouter(store, {
    issuer: server.url, legacy: { issuer: `${server.url}/legacy` }, accessTokenFormat: 'jwt',
    introspectionClients: [clients.resourceServer.clientId, clients.legacyResourceServer.clientId], ...options,
  });
  const app = express();
  app.use(router.router);
  let fetches = 0;
  server.setHandler((req, res) => {
    if (req.url?.endsWith('/oauth2/jwks')) fetches += 1;
    app(req, res);
  });
  return { url: server.url, oauth: router, jwksFetches: () => fetches, clients, close: () => server.close() };
}

/** RFC 8414 discovery, as every library here configures itself. */
async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { algorithm: 'oauth2', ...insecure }));
}

async function clientCredentials(as: oauth.AuthorizationServer, credentials: TestClient, scope?: string): Promise<string> {
  const client = { client_id: credentials.clientId };
  const response = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(credentials.clientSecret), scope ? { scope } : {}, insecure);
  return (await oauth.processClientCredentialsResponse(as, client, response)).access_token;
}

async function authorizationCode(as: oauth.AuthorizationServer, credentials: TestClient): Promise<{ accessToken: string; refreshToken: string }> {
  const client = { client_id: credentials.clientId };
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT_URI, scope: SCOPE,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  }).toString();
  const params = oauth.validateAuthResponse(as, client, await browseAuthorization(url), oauth.expectNoState);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(
    as, client, oauth.ClientSecretBasic(credentials.clientSecret), params, REDIRECT_URI, verifier, insecure));
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token! };
}

/** An API in another process: oauth4webapi's RFC 9068 validator with its defaults, for one issuer and audience. */
function validateWithOauth4webapi(as: oauth.AuthorizationServer, token: string, audience: string): Promise<oauth.JWTAccessTokenClaims> {
  const request = new Request('https://api.example/envelopes', { headers: { Authorization: `Bearer ${token}` } });
  return oauth.validateJwtAccessToken(as, request, audience, insecure);
}

/** Another API: jose's jwtVerify against the discovered jwks_uri, told the RFC 9068 rules explicitly. */
async function validateWithJose(jwks: jose.JWTVerifyGetKey, issuer: string, token: string, audience: string): Promise<jose.JWTPayload> {
  return (await jose.jwtVerify(token, jwks, { issuer, audience, typ: 'at+jwt', requiredClaims: REQUIRED_CLAIMS })).payload;
}

async function introspect(as: oauth.AuthorizationServer, resourceServer: TestClient, token: string, jwtResponse = false): Promise<oauth.IntrospectionResponse> {
  const client = { client_id: resourceServer.clientId };
  return oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(
    as, client, oauth.ClientSecretBasic(resourceServer.clientSecret), token, { ...insecure, ...(jwtResponse ? { requestJwtResponse: true } : {}) }));
}

/** What a library raises for a claim that is not the one it was told to expect. */
const claimMismatch = { oauth4webapi: { code: oauth.JWT_CLAIM_COMPARISON }, jose: jose.errors.JWTClaimValidationFailed };

describe.each([
  { name: 'store-generated ES256 key, default audience', alg: 'ES256', options: {}, audience: (host: JwtHost) => host.url },
  {
    name: 'host RS256 key, jwt.audience set', alg: 'RS256', audience: () => 'https://api.example.com',
    options: { jwt: { signingKeys: [generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey], audience: 'https://api.example.com' } },
  },
  { name: 'host Ed25519 key', alg: 'EdDSA', options: { jwt: { signingKeys: [generateKeyPairSync('ed25519').privateKey] } }, audience: (host: JwtHost) => host.url },
])('independent resource servers, $name', ({ alg, options, audience }) => {
  let host: JwtHost;
  beforeAll(async () => { host = await startHost(options); });
  afterAll(async () => { await host.close(); });

  describe.each([
    { address: 'main', prefix: '', other: '/legacy', code: 'code', credentials: 'credentials', resourceServer: 'resourceServer' },
    { address: 'legacy', prefix: '/legacy', other: '', code: 'legacyCode', credentials: 'legacyCredentials', resourceServer: 'legacyResourceServer' },
  ] as const)('$address address', ({ prefix, other, code, credentials, resourceServer }) => {
    let as: oauth.AuthorizationServer;
    let jwks: jose.JWTVerifyGetKey;
    beforeAll(async () => {
      as = await discover(`${host.url}${prefix}`);
      jwks = jose.createRemoteJWKSet(new URL(as.jwks_uri!));
    });

    it('RFC 9068 §2.1, §2.2, §4: an authorization_code token passes oauth4webapi and jose; iss is the discovered issuer, sub the user', async () => {
      const { accessToken } = await authorizationCode(as, host.clients[code]);
      expect(decodeJwt(accessToken).header).toMatchObject({ typ: 'at+jwt', alg });
      const claims = await validateWithOauth4webapi(as, accessToken, audience(host));
      expect(claims).toMatchObject({ iss: as.issuer, aud: audience(host), sub: USER.id, client_id: host.clients[code].clientId });
      expect(await validateWithJose(jwks, as.issuer, accessToken, audience(host))).toEqual(claims);
    });

    it('RFC 9068 §2.2.3: scope is one space-separated string, as requested', async () => {
      const { accessToken } = await authorizationCode(as, host.clients[code]);
      expect((await validateWithOauth4webapi(as, accessToken, audience(host))).scope).toBe(SCOPE);
      const narrowed = await clientCredentials(as, host.clients[credentials], 'envelopes:read');
      expect((await validateWithJose(jwks, as.issuer, narrowed, audience(host))).scope).toBe('envelopes:read');
    });

    it('RFC 9068 §2.2: a client_credentials token has sub = client_id, and passes both validators', async () => {
      const token = await clientCredentials(as, host.clients[credentials]);
      const claims = await validateWithOauth4webapi(as, token, audience(host));
      expect(claims).toMatchObject({ iss: as.issuer, sub: host.clients[credentials].clientId, client_id: host.clients[credentials].clientId });
      expect(await validateWithJose(jwks, as.issuer, token, audience(host))).toEqual(claims);
    });

    it('RFC 9068 §4: a resource server configured for the other address refuses the token (iss)', async () => {
      const token = await clientCredentials(as, host.clients[credentials]);
      const elsewhere = await discover(`${host.url}${other}`);
      await expect(validateWithOauth4webapi(elsewhere, token, audience(host))).rejects.toMatchObject(claimMismatch.oauth4webapi);
      const otherJwks = jose.createRemoteJWKSet(new URL(elsewhere.jwks_uri!));
      await expect(validateWithJose(otherJwks, elsewhere.issuer, token, audience(host))).rejects.toBeInstanceOf(claimMismatch.jose);
    });

    it('RFC 9068 §4: a resource server expecting another audience refuses the token (aud)', async () => {
      const token = await clientCredentials(as, host.clients[credentials]);
      await expect(validateWithOauth4webapi(as, token, 'https://other-api.example')).rejects.toMatchObject(claimMismatch.oauth4webapi);
      await expect(validateWithJose(jwks, as.issuer, token, 'https://other-api.example')).rejects.toBeInstanceOf(claimMismatch.jose);
    });

    it('RFC 9068 §4 (RFC 7515 §5.2): a token whose claims were changed fails the signature check', async () => {
      const [header, , signature] = (await clientCredentials(as, host.clients[credentials])).split('.');
      const { claims } = decodeJwt((await authorizationCode(as, host.clients[code])).accessToken);
      const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'user-mallory' })).toString('base64url')}.${signature}`;
      await expect(validateWithOauth4webapi(as, forged, audience(host))).rejects.toBeInstanceOf(oauth.OperationProcessingError);
      await expect(validateWithJose(jwks, as.issuer, forged, audience(host))).rejects.toBeInstanceOf(jose.errors.JWSSignatureVerificationFailed);
    });

    it("RFC 7662 §2.2: a resource server in introspectionClients introspects another integration's JWT: what the JWT says", async () => {
      const token = await clientCredentials(as, host.clients[credentials], 'envelopes:read');
      const claims = decodeJwt(token).claims;
      expect(await introspect(as, host.clients[resourceServer], token)).toEqual({
        active: true, scope: 'envelopes:read', client_id: claims.client_id, token_type: 'Bearer', exp: claims.exp, iss: as.issuer,
      });
      // A resource server registered at the other address introspects it too, and learns which issuer it came from.
      const elsewhere = await discover(`${host.url}${other}`);
      const otherServer = resourceServer === 'resourceServer' ? 'legacyResourceServer' : 'resourceServer';
      expect(await introspect(elsewhere, host.clients[otherServer], token)).toMatchObject({ active: true, iss: as.issuer });
    });
  });
});

describe('independent resource servers across time: rotation, expiry, revocation', () => {
  let host: JwtHost;
  let as: oauth.AuthorizationServer;
  beforeAll(async () => {
    host = await startHost();
    as = await discover(host.url);
  });
  afterAll(async () => { await host.close(); });
  // Only Date is faked: sockets and timers stay real, and the router, the store and both validators read one clock.
  afterEach(() => { vi.useRealTimers(); });

  it('RFC 9068 §4, RFC 7517: validators caching the JWK Set keep validating across oauth.rotateSigningKey()', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const cached = await discover(host.url); // its own oauth4webapi JWK Set cache
    const jwks = jose.createRemoteJWKSet(new URL(cached.jwks_uri!));
    const before = await clientCredentials(cached, host.clients.credentials);
    await validateWithOauth4webapi(cached, before, host.url);
    await validateWithJose(jwks, host.url, before, host.url);
    const fetched = host.jwksFetches();

    const rotatedAt = Date.now();
    const { kid } = await host.oauth.rotateSigningKey();
    // Published at once, signing only later: a token made a second on still names the key every cache holds.
    vi.setSystemTime(rotatedAt + 1_000);
    const afterRotation = await clientCredentials(cached, host.clients.credentials);
    expect(decodeJwt(afterRotation).header.kid).toBe(decodeJwt(before).header.kid);
    await validateWithOauth4webapi(cached, afterRotation, host.url);
    await validateWithJose(jwks, host.url, afterRotation, host.url);
    expect(host.jwksFetches()).toBe(fetched);

    // README: the new key signs PUBLICATION_DELAY_MS later; by then each validator's copy is old enough to fetch again.
    vi.setSystemTime(rotatedAt + PUBLICATION_DELAY_MS + 1_000);
    const signedWithNewKey = await clientCredentials(cached, host.clients.credentials);
    expect(decodeJwt(signedWithNewKey).header.kid).toBe(kid);
    await validateWithOauth4webapi(cached, signedWithNewKey, host.url);
    await validateWithJose(jwks, host.url, signedWithNewKey, host.url);
    expect(host.jwksFetches()).toBe(fetched + 2);
    // The superseded key stays published until accessTokenTtl after the switch: earlier tokens keep verifying.
    await validateWithOauth4webapi(cached, before, host.url);
    await validateWithJose(jwks, host.url, before, host.url);
  });

  it('RFC 9068 §4 (RFC 7519 §4.1.4): once exp has passed, both validators with their defaults refuse the token, and introspection says inactive', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const token = await clientCredentials(as, host.clients.credentials);
    const jwks = jose.createRemoteJWKSet(new URL(as.jwks_uri!));
    await validateWithJose(jwks, host.url, token, host.url);
    // Past oauth4webapi's default clock tolerance (30 s) too.
    vi.setSystemTime(((decodeJwt(token).claims.exp as number) + 31) * 1000);
    await expect(validateWithOauth4webapi(as, token, host.url)).rejects.toMatchObject({ code: oauth.JWT_TIMESTAMP_CHECK });
    await expect(validateWithJose(jwks, host.url, token, host.url)).rejects.toBeInstanceOf(jose.errors.JWTExpired);
    expect(await introspect(as, host.clients.resourceServer, token)).toEqual({ active: false });
  });

  it('RFC 7009 §2, RFC 7662 §2.2: a revoked JWT still validates locally until exp (README); introspection tells the resource server it is inactive', async () => {
    const { accessToken, refreshToken } = await authorizationCode(as, host.clients.code);
    const client = { client_id: host.clients.code.clientId };
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.ClientSecretBasic(host.clients.code.clientSecret), refreshToken, insecure));
    expect((await validateWithOauth4webapi(as, accessToken, host.url)).sub).toBe(USER.id);
    expect(await introspect(as, host.clients.resourceServer, accessToken)).toEqual({ active: false });
  });

  it('RFC 9701 is not offered (no introspection_signing_alg_values_supported): a resource server asking for a JWT response gets the JSON one, which oauth4webapi takes', async () => {
    expect(as.introspection_signing_alg_values_supported).toBeUndefined();
    const token = await clientCredentials(as, host.clients.credentials);
    expect(await introspect(as, host.clients.resourceServer, token, true)).toMatchObject({ active: true, iss: host.url });
  });
});
