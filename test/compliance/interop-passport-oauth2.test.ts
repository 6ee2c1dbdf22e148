// Interoperability: passport-oauth2's token client (node-oauth's OAuth2, which passport-oauth2 hosts reuse for
// machine-to-machine calls) drives client_credentials and a wrong secret; the browser test covers the code flow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Strategy as OAuth2Strategy } from 'passport-oauth2';
import type { TestClient } from '../helpers/app.js';
import { callApi, startInteropHost, type InteropHost } from '../helpers/interop-host.js';

/** What node-oauth's getOAuthAccessToken calls back with. */
interface TokenResult {
  readonly accessToken: string | undefined;
  readonly refreshToken: string | undefined;
  readonly params: Record<string, unknown>;
}

/** passport-oauth2 exposes its token client to subclasses; this is how hosts reach it for other grants. */
class TokenClientStrategy extends OAuth2Strategy {
  token(params: Record<string, string>): Promise<TokenResult> {
    return new Promise((resolve, reject) => {
      this._oauth2.getOAuthAccessToken('', params, (err, accessToken, refreshToken, results) => {
        if (err) reject(Object.assign(new Error('token request failed'), { oauth: err }));
        else resolve({ accessToken, refreshToken, params: results as Record<string, unknown> });
      });
    });
  }
}

describe('interoperability with passport-oauth2 (default options)', () => {
  let host: InteropHost;

  beforeAll(async () => {
    host = await startInteropHost();
  });
  afterAll(async () => {
    await host.close();
  });

  function strategy(client: TestClient): TokenClientStrategy {
    return new TokenClientStrategy({
      authorizationURL: host.authorizeUrl, tokenURL: host.tokenUrl,
      clientID: client.clientId, clientSecret: client.clientSecret, callbackURL: 'https://client.example/callback',
    }, () => {});
  }

  it('client_credentials with the secret in the form (client_secret_post) gets SPEC §4.4 fields and calls a scoped route', async () => {
    const client = await host.registerCredentialsClient();
    const before = host.tokenRequests.length;
    const result = await strategy(client).token({ grant_type: 'client_credentials' });
    expect(Object.keys(result.params).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(result.refreshToken).toBeUndefined();
    expect(host.tokenRequests.slice(before)).toEqual([{ basic: false }]);
    const api = await callApi(host, result.accessToken!);
    expect(api).toEqual({ status: 200, body: expect.objectContaining({ clientId: client.clientId, userId: null, allAccess: true }) });
  });

  it('a wrong secret gets invalid_client (401), which node-oauth reports as an error with the JSON body', async () => {
    const client = await host.registerCredentialsClient();
    const failure = await strategy({ ...client, clientSecret: 'not-the-secret' }).token({ grant_type: 'client_credentials' })
      .then(() => null, (error: { oauth: { statusCode: number; data: string } }) => error.oauth);
    expect(failure?.statusCode).toBe(401);
    expect(JSON.parse(failure!.data)).toMatchObject({ error: 'invalid_client' });
  });
});
