// Interoperability: @badgateway/oauth2-client v3 with only `server`, `clientId` and `clientSecret` (it
// discovers the rest from RFC 8414 metadata) drives the three grants for integrations registered without scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuth2Client, OAuth2Fetch, OAuth2HttpError, type OAuth2Token } from '@badgateway/oauth2-client';
import { REDIRECT_URI, USER, type TestClient } from '../helpers/app.js';
import { browseAuthorization } from '../helpers/fetch-browser.js';
import { callApi, startInteropHost, type InteropHost } from '../helpers/interop-host.js';

describe('interoperability with @badgateway/oauth2-client (default settings, discovery)', () => {
  let host: InteropHost;

  beforeAll(async () => {
    host = await startInteropHost();
  });
  afterAll(async () => {
    await host.close();
  });

  function oauthClient(client: TestClient): OAuth2Client {
    return new OAuth2Client({ server: host.url, clientId: client.clientId, clientSecret: client.clientSecret });
  }

  /** getAuthorizeUri → login and consent → getTokenFromCodeRedirect (which checks the state). */
  async function codeFlow(oauth: OAuth2Client): Promise<OAuth2Token> {
    const state = 'badgateway-state';
    const authorizeUri = await oauth.authorizationCode.getAuthorizeUri({ redirectUri: REDIRECT_URI, state });
    const callback = await browseAuthorization(new URL(authorizeUri));
    return oauth.authorizationCode.getTokenFromCodeRedirect(callback, { redirectUri: REDIRECT_URI, state });
  }

  it('authorization code grant: endpoints discovered, a token with a refresh token that opens a scoped route (all-access)', async () => {
    const client = await host.registerCodeClient();
    const token = await codeFlow(oauthClient(client));
    expect(typeof token.refreshToken).toBe('string');
    expect(token.expiresAt).toBeGreaterThan(Date.now());
    // No scope in the response of an integration without scopes (SPEC §4.3's fields only).
    expect(token.scope).toBeUndefined();
    const api = await callApi(host, token.accessToken);
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ clientId: client.clientId, userId: USER.id });
  });

  it('refresh token grant: refreshToken() keeps the refresh token it had, which keeps working (SPEC §4.5, not rotated)', async () => {
    const client = await host.registerCodeClient();
    const oauth = oauthClient(client);
    const token = await codeFlow(oauth);
    const refreshed = await oauth.refreshToken(token);
    expect(refreshed.accessToken).not.toBe(token.accessToken);
    // The server sent no refresh_token; the library copied the old one into the new token.
    expect(refreshed.refreshToken).toBe(token.refreshToken);
    expect((await callApi(host, refreshed.accessToken)).status).toBe(200);
    const again = await oauth.refreshToken(refreshed);
    expect((await callApi(host, again.accessToken)).status).toBe(200);
  });

  it('OAuth2Fetch: a forced refresh stores a token that still has the refresh token, and fetch() sends the new access token', async () => {
    const client = await host.registerCodeClient();
    const oauth = oauthClient(client);
    const first = await codeFlow(oauth);
    const stored: OAuth2Token[] = [];
    const wrapper = new OAuth2Fetch({ client: oauth, getNewToken: () => first, storeToken: (token) => { stored.push(token); } });
    const res = await wrapper.fetch(host.apiUrl);
    expect(res.status).toBe(200);
    const refreshed = await wrapper.refreshToken();
    expect(refreshed.accessToken).not.toBe(first.accessToken);
    expect(stored.at(-1)).toMatchObject({ accessToken: refreshed.accessToken, refreshToken: first.refreshToken });
    expect((await wrapper.fetch(host.apiUrl)).status).toBe(200);
  });

  it('client credentials grant: clientCredentials() gives a token without a refresh token that opens a scoped route', async () => {
    const client = await host.registerCredentialsClient();
    const token = await oauthClient(client).clientCredentials();
    expect(token.refreshToken).toBeNull();
    expect(token.scope).toBeUndefined();
    const api = await callApi(host, token.accessToken);
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ clientId: client.clientId, userId: null });
  });

  it('revocation and introspection (RFC 7009, RFC 7662) through the discovered endpoints', async () => {
    const client = await host.registerCodeClient();
    const oauth = oauthClient(client);
    const token = await codeFlow(oauth);
    expect(await oauth.introspect(token)).toMatchObject({ active: true, client_id: client.clientId, sub: USER.id });
    await oauth.revoke(token, 'refresh_token');
    expect(await oauth.introspect(token)).toEqual({ active: false });
    const refused = await oauth.refreshToken(token).then(() => null, (error: unknown) => error);
    expect(refused).toBeInstanceOf(OAuth2HttpError);
    expect((refused as OAuth2HttpError).oauth2Code).toBe('invalid_grant');
  });

  it('a legacy integration (SPEC §9): discoveryEndpoint at {legacy_auth_url} (`server` alone would find the main issuer\'s document)', async () => {
    const client = await host.registerCredentialsClient({ legacy: true });
    const legacy = new OAuth2Client({
      server: host.legacyUrl, discoveryEndpoint: `${host.legacyUrl}/.well-known/oauth-authorization-server`,
      clientId: client.clientId, clientSecret: client.clientSecret,
    });
    const token = await legacy.clientCredentials();
    expect((await callApi(host, token.accessToken)).body).toMatchObject({ clientId: client.clientId, issuer: host.legacyUrl });
    // With `server` only, the root discovery document sends it to {auth_url}, which names the legacy address.
    const refused = await oauthClient(client).clientCredentials().then(() => null, (error: unknown) => error);
    expect((refused as OAuth2HttpError).oauth2Code).toBe('invalid_client');
    expect((refused as OAuth2HttpError).message).toContain(host.legacyUrl);
  });

  it('a wrong secret: clientCredentials() rejects with OAuth2HttpError invalid_client (401)', async () => {
    const client = await host.registerCredentialsClient();
    const refused = await oauthClient({ ...client, clientSecret: 'wrong-secret' }).clientCredentials().then(() => null, (error: unknown) => error);
    expect(refused).toBeInstanceOf(OAuth2HttpError);
    expect((refused as OAuth2HttpError).httpCode).toBe(401);
    expect((refused as OAuth2HttpError).oauth2Code).toBe('invalid_client');
  });
});
