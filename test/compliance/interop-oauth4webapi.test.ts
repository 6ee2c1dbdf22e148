// Interoperability: the three grants of SPEC §1, revocation and introspection driven by oauth4webapi v3, the
// low-level client under openid-client, configured only from each issuer's RFC 8414 discovery document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oauth from 'oauth4webapi';
import { REDIRECT_URI, USER, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { browseAuthorization, listenLate, type LateServer } from '../helpers/fetch-browser.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('interoperability with oauth4webapi (discovery, RFC 8414 algorithm "oauth2")', () => {
  let server: LateServer;
  let t: TestApp;
  let issuer: string;

  beforeAll(async () => {
    server = await listenLate();
    issuer = server.url;
    t = await createTestApp({ issuer, legacy: { issuer: `${issuer}/legacy` } });
    server.setHandler(t.app);
  });
  afterAll(async () => {
    await server.close();
  });

  /** Discovers `at` and returns what every oauth4webapi call needs. */
  async function setUp(at: string, credentials: TestClient): Promise<{ as: oauth.AuthorizationServer; client: oauth.Client; auth: oauth.ClientAuth }> {
    const issuerUrl = new URL(at);
    const as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, { algorithm: 'oauth2', ...insecure }));
    return { as, client: { client_id: credentials.clientId }, auth: oauth.ClientSecretBasic(credentials.clientSecret) };
  }

  async function apiStatus(accessToken: string): Promise<number> {
    try {
      return (await oauth.protectedResourceRequest(accessToken, 'GET', new URL(`${issuer}/api/v1/me`), undefined, undefined, insecure)).status;
    } catch (error) {
      // A refused token comes back as a Bearer challenge (RFC 6750 §3), which oauth4webapi raises.
      if (!(error instanceof oauth.WWWAuthenticateChallengeError)) throw error;
      expect(error.cause[0]).toMatchObject({ scheme: 'bearer', parameters: { error: 'invalid_token' } });
      return error.status;
    }
  }

  describe.each([
    { name: 'main issuer', prefix: '', code: (app: TestApp) => app.codeClient, credentials: (app: TestApp) => app.credentialsClient },
    { name: 'legacy issuer', prefix: '/legacy', code: (app: TestApp) => app.legacyCodeClient, credentials: (app: TestApp) => app.legacyCredentialsClient },
  ])('$name', ({ prefix, code, credentials }) => {
    const at = () => `${issuer}${prefix}`;

    it('discovers the server; processDiscoveryResponse checks the issuer equals the one asked for', async () => {
      const { as } = await setUp(at(), code(t));
      expect(as.issuer).toBe(at());
      expect(as.code_challenge_methods_supported).toEqual(['S256']);
      expect(as.authorization_response_iss_parameter_supported).toBe(true);
    });

    it('authorization code grant with PKCE S256 and state, then refresh token grant, then the API', async () => {
      const { as, client, auth } = await setUp(at(), code(t));
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT_URI, state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      }).toString();
      const callback = await browseAuthorization(url);
      // validateAuthResponse requires iss here, since the metadata announces it (RFC 9207).
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client,
        await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, insecure));
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.refresh_token).toEqual(expect.any(String));
      expect(tokens.expires_in).toBe(3600);
      expect(await apiStatus(tokens.access_token)).toBe(200);

      const refreshed = await oauth.processRefreshTokenResponse(as, client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
      expect(refreshed.refresh_token).toBeUndefined();
      expect(await apiStatus(refreshed.access_token)).toBe(200);

      const described = await oauth.processIntrospectionResponse(as, client,
        await oauth.introspectionRequest(as, client, auth, refreshed.access_token, insecure));
      expect(described).toMatchObject({ active: true, client_id: client.client_id, sub: USER.id, iss: at(), token_type: 'Bearer' });

      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, {
        additionalParameters: { token_type_hint: 'refresh_token' }, ...insecure,
      }));
      expect(await apiStatus(tokens.access_token)).toBe(401);
      expect(await apiStatus(refreshed.access_token)).toBe(401);
      const gone = await oauth.processIntrospectionResponse(as, client,
        await oauth.introspectionRequest(as, client, auth, refreshed.access_token, insecure));
      expect(gone).toEqual({ active: false });
      const refused = await oauth.processRefreshTokenResponse(as, client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure)).then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
      expect((refused as oauth.ResponseBodyError).error).toBe('invalid_grant');
    });

    it('client credentials grant, introspection without sub, revocation', async () => {
      const { as, client, auth } = await setUp(at(), credentials(t));
      const tokens = await oauth.processClientCredentialsResponse(as, client,
        await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'envelopes:read' }, insecure));
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.refresh_token).toBeUndefined();
      expect(await apiStatus(tokens.access_token)).toBe(200);
      const described = await oauth.processIntrospectionResponse(as, client,
        await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure));
      expect(described).toMatchObject({ active: true, scope: 'envelopes:read', client_id: client.client_id, iss: at() });
      expect(described.sub).toBeUndefined();
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure));
      expect(await apiStatus(tokens.access_token)).toBe(401);
    });

    it('Deny: validateAuthResponse raises AuthorizationResponseError access_denied', async () => {
      const { as, client } = await setUp(at(), code(t));
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT_URI, state, prompt: 'consent',
      }).toString();
      const callback = await browseAuthorization(url, { decision: 'deny' });
      let refused: unknown = null;
      try {
        oauth.validateAuthResponse(as, client, callback, state);
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(oauth.AuthorizationResponseError);
      expect((refused as oauth.AuthorizationResponseError).error).toBe('access_denied');
    });
  });

  it('refuses discovery of a legacy document for the main issuer: the issuers differ (RFC 8414 §3.3)', async () => {
    const legacyDocument = await fetch(`${issuer}/.well-known/oauth-authorization-server/legacy`);
    const refused = await oauth.processDiscoveryResponse(new URL(issuer), legacyDocument).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(oauth.OperationProcessingError);
  });
});
