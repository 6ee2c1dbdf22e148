// Interoperability: openid-client v6 with its default client authentication (a client_secret given and no
// clientAuthentication means client_secret_post) drives SPEC's three grants for integrations without scopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { REDIRECT_URI, USER, type TestClient } from '../helpers/app.js';
import { browseAuthorization } from '../helpers/fetch-browser.js';
import { callApi, startInteropHost, type InteropHost } from '../helpers/interop-host.js';

describe('interoperability with openid-client (default client authentication)', () => {
  let host: InteropHost;

  beforeAll(async () => {
    host = await startInteropHost();
  });
  afterAll(async () => {
    await host.close();
  });

  /**
   * discovery(server, clientId, clientSecret): the only non-default is algorithm 'oauth2', because this is an
   * OAuth server with RFC 8414 metadata, not an OpenID Provider; allowInsecureRequests is for the HTTP test server.
   */
  function discover(credentials: TestClient): Promise<client.Configuration> {
    return client.discovery(new URL(host.url), credentials.clientId, credentials.clientSecret, undefined, {
      algorithm: 'oauth2', execute: [client.allowInsecureRequests],
    });
  }

  async function codeFlow(config: client.Configuration) {
    const state = client.randomState();
    const callbackUrl = await browseAuthorization(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, state }));
    return client.authorizationCodeGrant(config, callbackUrl, { expectedState: state });
  }

  it('authorization code grant with client_secret_post: the token opens a scoped route (all-access)', async () => {
    const registered = await host.registerCodeClient();
    const before = host.tokenRequests.length;
    const tokens = await codeFlow(await discover(registered));
    expect(host.tokenRequests.slice(before)).toEqual([{ basic: false }]);
    expect(typeof tokens.refresh_token).toBe('string');
    expect(tokens.scope).toBeUndefined();
    expect(await callApi(host, tokens.access_token)).toEqual({ status: 200, body: expect.objectContaining({ clientId: registered.clientId, userId: USER.id }) });
  });

  it('refresh token grant: refreshTokenGrant returns no refresh_token, so the caller keeps its own, which keeps working (SPEC §4.5)', async () => {
    const registered = await host.registerCodeClient();
    const config = await discover(registered);
    const tokens = await codeFlow(config);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeUndefined();
    expect((await callApi(host, refreshed.access_token)).status).toBe(200);
    const again = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await callApi(host, again.access_token)).status).toBe(200);
  });

  it('client credentials grant with client_secret_post: no refresh token, a scoped route answers', async () => {
    const registered = await host.registerCredentialsClient();
    const tokens = await client.clientCredentialsGrant(await discover(registered));
    expect(tokens.refresh_token).toBeUndefined();
    expect(await callApi(host, tokens.access_token)).toEqual({ status: 200, body: expect.objectContaining({ clientId: registered.clientId, userId: null }) });
  });
});
