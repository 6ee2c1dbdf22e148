// Interoperability: the three grants of SPEC §1, revocation and introspection driven by an unmodified
// third-party client, openid-client v6, configured only from the RFC 8414 discovery document of each issuer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { REDIRECT_URI, USER, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { browseAuthorization, listenLate, type LateServer } from '../helpers/fetch-browser.js';

describe('interoperability with openid-client (discovery, RFC 8414 algorithm "oauth2")', () => {
  let server: LateServer;
  let t: TestApp;
  let issuer: string;
  let legacyIssuer: string;

  beforeAll(async () => {
    server = await listenLate();
    issuer = server.url;
    legacyIssuer = `${server.url}/legacy`;
    t = await createTestApp({ issuer, legacy: { issuer: legacyIssuer } });
    server.setHandler(t.app);
  });
  afterAll(async () => {
    await server.close();
  });

  /** A client configuration from the discovery document of `server`, authenticating with client_secret_basic. */
  function discover(server: string, credentials: TestClient): Promise<client.Configuration> {
    return client.discovery(new URL(server), credentials.clientId, credentials.clientSecret, client.ClientSecretBasic(credentials.clientSecret), {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
    });
  }

  /** The authorization code flow with PKCE S256 and state, as openid-client's README does it. */
  async function codeFlow(config: client.Configuration, decision: 'allow' | 'deny' = 'allow') {
    const pkceCodeVerifier = client.randomPKCECodeVerifier();
    const codeChallenge = await client.calculatePKCECodeChallenge(pkceCodeVerifier);
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI, scope: 'envelopes:read envelopes:sign', code_challenge: codeChallenge, code_challenge_method: 'S256', state,
      // Earlier tests consented already; ask for the consent page again so that Deny can be chosen.
      ...(decision === 'deny' ? { prompt: 'consent' } : {}),
    });
    const callbackUrl = await browseAuthorization(authorizationUrl, { decision });
    return { callbackUrl, pkceCodeVerifier, state };
  }

  async function apiStatus(config: client.Configuration, accessToken: string): Promise<number> {
    try {
      return (await client.fetchProtectedResource(config, accessToken, new URL(`${issuer}/api/v1/me`), 'GET')).status;
    } catch (error) {
      // A 401 with a WWW-Authenticate challenge is raised by openid-client as WWWAuthenticateChallengeError.
      if (error instanceof client.WWWAuthenticateChallengeError) return error.status;
      throw error;
    }
  }

  describe.each([
    { name: 'main issuer', prefix: '', code: (app: TestApp) => app.codeClient, credentials: (app: TestApp) => app.credentialsClient },
    { name: 'legacy issuer', prefix: '/legacy', code: (app: TestApp) => app.legacyCodeClient, credentials: (app: TestApp) => app.legacyCredentialsClient },
  ])('$name', ({ prefix, code, credentials }) => {
    const at = () => `${issuer}${prefix}`;

    it('discovers the server: issuer validated, endpoints, PKCE S256 supported', async () => {
      const config = await discover(at(), code(t));
      const metadata = config.serverMetadata();
      expect(metadata.issuer).toBe(at());
      expect(metadata.token_endpoint).toBe(`${at()}/oauth2/token`);
      expect(metadata.supportsPKCE()).toBe(true);
      expect(metadata.supportsPKCE('plain')).toBe(false);
    });

    it('authorization code grant: buildAuthorizationUrl → login and consent → authorizationCodeGrant (PKCE, state, iss checked)', async () => {
      const config = await discover(at(), code(t));
      const { callbackUrl, pkceCodeVerifier, state } = await codeFlow(config);
      expect(callbackUrl.searchParams.get('iss')).toBe(at());
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier, expectedState: state });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(typeof tokens.access_token).toBe('string');
      expect(typeof tokens.refresh_token).toBe('string');
      expect(tokens.expiresIn()).toBeGreaterThan(3500);
      expect(await apiStatus(config, tokens.access_token)).toBe(200);
      // The granted scope equals the requested one, so the token response may omit it (RFC 6749 §5.1).
      expect((await client.tokenIntrospection(config, tokens.access_token)).scope).toBe('envelopes:read envelopes:sign');
    });

    it('refresh token grant: refreshTokenGrant gives a new working access token and no new refresh token (SPEC §4.5)', async () => {
      const config = await discover(at(), code(t));
      const { callbackUrl, pkceCodeVerifier, state } = await codeFlow(config);
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier, expectedState: state });
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect(refreshed.refresh_token).toBeUndefined();
      expect(refreshed.token_type.toLowerCase()).toBe('bearer');
      expect(await apiStatus(config, refreshed.access_token)).toBe(200);
    });

    it('client credentials grant: clientCredentialsGrant gives an access token and no refresh token (SPEC §4.4)', async () => {
      const config = await discover(at(), credentials(t));
      const tokens = await client.clientCredentialsGrant(config);
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.expiresIn()).toBeGreaterThan(3500);
      expect(await apiStatus(config, tokens.access_token)).toBe(200);
      const narrowed = await client.clientCredentialsGrant(config, { scope: 'envelopes:read' });
      expect((await client.tokenIntrospection(config, narrowed.access_token)).scope).toBe('envelopes:read');
    });

    it('introspection: tokenIntrospection describes the client\'s own access and refresh tokens', async () => {
      const config = await discover(at(), code(t));
      const { callbackUrl, pkceCodeVerifier, state } = await codeFlow(config);
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier, expectedState: state });
      const access = await client.tokenIntrospection(config, tokens.access_token);
      expect(access).toMatchObject({ active: true, client_id: code(t).clientId, token_type: 'Bearer', sub: USER.id, iss: at() });
      const refresh = await client.tokenIntrospection(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
      expect(refresh).toMatchObject({ active: true, token_use: 'refresh_token' });
      expect(refresh).not.toHaveProperty('token_type');
      const cc = await discover(at(), credentials(t));
      const ccToken = (await client.clientCredentialsGrant(cc)).access_token;
      const described = await client.tokenIntrospection(cc, ccToken);
      expect(described).toMatchObject({ active: true, client_id: credentials(t).clientId });
      expect(described.sub).toBeUndefined();
    });

    it('revocation: tokenRevocation of the refresh token ends the grant; introspection then says {active:false}', async () => {
      const config = await discover(at(), code(t));
      const { callbackUrl, pkceCodeVerifier, state } = await codeFlow(config);
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier, expectedState: state });
      await client.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
      expect(await client.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
      expect(await client.tokenIntrospection(config, tokens.refresh_token!)).toEqual({ active: false });
      expect(await apiStatus(config, tokens.access_token)).toBe(401);
      const refused = await client.refreshTokenGrant(config, tokens.refresh_token!).then(() => null, (error: unknown) => error);
      expect(refused).toBeInstanceOf(client.ResponseBodyError);
      expect((refused as client.ResponseBodyError).error).toBe('invalid_grant');
    });

    it('revocation: tokenRevocation of a client_credentials access token makes it unusable', async () => {
      const config = await discover(at(), credentials(t));
      const tokens = await client.clientCredentialsGrant(config);
      await client.tokenRevocation(config, tokens.access_token);
      expect(await apiStatus(config, tokens.access_token)).toBe(401);
      // Revoking again, or an unknown token, is not an error (RFC 7009 §2.2).
      await client.tokenRevocation(config, tokens.access_token);
      await client.tokenRevocation(config, 'never-issued');
    });

    it('Deny: authorizationCodeGrant raises AuthorizationResponseError access_denied', async () => {
      const config = await discover(at(), code(t));
      const { callbackUrl, pkceCodeVerifier, state } = await codeFlow(config, 'deny');
      const refused = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier, expectedState: state }).then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(client.AuthorizationResponseError);
      expect((refused as client.AuthorizationResponseError).error).toBe('access_denied');
    });
  });

  describe('refusals as openid-client sees them', () => {
    it('a wrong PKCE verifier: the code exchange fails with invalid_grant', async () => {
      const config = await discover(issuer, t.codeClient);
      const { callbackUrl, state } = await codeFlow(config);
      const refused = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: client.randomPKCECodeVerifier(), expectedState: state })
        .then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(client.ResponseBodyError);
      expect((refused as client.ResponseBodyError).error).toBe('invalid_grant');
    });

    /** openid-client raises a 401 with a WWW-Authenticate header as a challenge error; the JSON body is still there. */
    async function expectBasicChallenge(refused: unknown): Promise<{ error: string; error_description?: string }> {
      expect(refused).toBeInstanceOf(client.WWWAuthenticateChallengeError);
      const challenge = refused as client.WWWAuthenticateChallengeError;
      expect(challenge.status).toBe(401);
      expect(challenge.cause[0]).toMatchObject({ scheme: 'basic', parameters: { realm: issuer } });
      return (await challenge.response.json()) as { error: string; error_description?: string };
    }

    it('a wrong secret: invalid_client (401 with a Basic challenge)', async () => {
      const config = await discover(issuer, { clientId: t.credentialsClient.clientId, clientSecret: 'wrong-secret' });
      const refused = await client.clientCredentialsGrant(config).then(() => null, (e: unknown) => e);
      expect((await expectBasicChallenge(refused)).error).toBe('invalid_client');
    });

    it('a legacy client configured from the main discovery document: invalid_client naming the legacy address (SPEC §9)', async () => {
      const config = await discover(issuer, t.legacyCredentialsClient);
      const refused = await client.clientCredentialsGrant(config).then(() => null, (e: unknown) => e);
      const body = await expectBasicChallenge(refused);
      expect(body.error).toBe('invalid_client');
      expect(body.error_description).toContain(legacyIssuer);
    });

    it('an authorization response from the other issuer is refused by the client (RFC 9207 iss check)', async () => {
      const legacy = await discover(legacyIssuer, t.legacyCodeClient);
      const { callbackUrl, pkceCodeVerifier, state } = await codeFlow(legacy);
      // The same client id configured against the main issuer must not accept a response issued by the legacy one.
      const mixedUp = await discover(issuer, t.legacyCodeClient);
      const refused = await client.authorizationCodeGrant(mixedUp, callbackUrl, { pkceCodeVerifier, expectedState: state }).then(() => null, (e: unknown) => e);
      expect(refused).toBeInstanceOf(client.ClientError);
      expect(((refused as client.ClientError).cause as Error).message).toMatch(/"iss" \(issuer\)/);
    });
  });
});
