// Interoperability: the OAuth clients Debian ships (Python requests-oauthlib and Authlib, Go golang.org/x/oauth2)
// drive SPEC's three grants against the router on a real port, run as child processes from test/interop-clients.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIRECT_URI, USER, type TestClient } from '../helpers/app.js';
import { runInteropClient, type Json } from '../helpers/interop-client-process.js';
import { startInteropHost, type InteropHost } from '../helpers/interop-host.js';

const ENABLED = process.env.OAUTH_TEST_DEBIAN_CLIENTS;
if (!ENABLED) console.log('set OAUTH_TEST_DEBIAN_CLIENTS=1 to run the Python and Go client tests (Debian packages: see .ci/run)');

// Debian's interpreter, whose dist-packages hold python3-requests-oauthlib and python3-authlib (not a pyenv one).
const PYTHON = '/usr/bin/python3';
const CLIENTS = fileURLToPath(new URL('../interop-clients/', import.meta.url));
// Debian's golang-golang-x-oauth2-dev lives in this GOPATH; GOPATH mode, no module download.
const GO_ENV = { GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '', GOPROXY: 'off' };
const run = promisify(execFile);

/** A secret an earlier system issued: `+` and `%` read differently once form-decoded (RFC 6749 §2.3.1). */
const IMPORTED_SECRET = 's3cret+from%2019/ok=';
/** A secret with characters outside ASCII, which requests and Authlib encode as ISO-8859-1 in Basic (RFC 7617 §2.1). */
const NON_ASCII_SECRET = 'clé+secrète%2019§';

describe.skipIf(!ENABLED)('interoperability with the Python and Go OAuth clients Debian ships', () => {
  let host: InteropHost;
  let goBuild: string;
  let goClient: string;

  beforeAll(async () => {
    // With the variable set, a missing package fails the suite loudly instead of skipping it.
    await run(PYTHON, ['-c', 'import requests_oauthlib, authlib']).catch((error: unknown) => {
      throw new Error(`OAUTH_TEST_DEBIAN_CLIENTS is set but ${PYTHON} cannot import requests_oauthlib and authlib `
        + `(apt-get install python3-requests-oauthlib python3-authlib): ${String(error)}`);
    });
    goBuild = mkdtempSync(join(tmpdir(), 'x-oauth2-client-'));
    goClient = join(goBuild, 'x_oauth2_client');
    await run('go', ['build', '-o', goClient, join(CLIENTS, 'go/x_oauth2_client.go')], { env: { ...process.env, ...GO_ENV } }).catch((error: unknown) => {
      throw new Error('OAUTH_TEST_DEBIAN_CLIENTS is set but the Go client does not build '
        + `(apt-get install golang-go golang-golang-x-oauth2-dev): ${String(error)}`);
    });
    host = await startInteropHost();
  }, 180_000);
  afterAll(async () => {
    await host?.close();
    if (goBuild) rmSync(goBuild, { recursive: true, force: true });
  });

  /** Runs a client program in `mode` against the host as `client` (see runInteropClient). */
  const runClient = (command: string, args: readonly string[], mode: 'code' | 'credentials', client: TestClient): Promise<Json> => runInteropClient(command, args, mode, {
    CLIENT_ID: client.clientId, CLIENT_SECRET: client.clientSecret, AUTHORIZE_URL: host.authorizeUrl,
    TOKEN_URL: host.tokenUrl, REDIRECT_URI, API_URL: host.apiUrl,
    // oauthlib refuses http:// token endpoints unless told that this is a test; the test server is loopback HTTP.
    OAUTHLIB_INSECURE_TRANSPORT: '1',
  });

  const python = (script: string) => (mode: 'code' | 'credentials', client: TestClient) => runClient(PYTHON, [join(CLIENTS, 'python', script)], mode, client);
  /** The API answered 200 with the token's identity (a scoped route: integrations without scopes are all-access). */
  const allowed = (userId: string | null, clientId: string) => ({ status: 200, body: expect.objectContaining({ clientId, userId }) });

  describe('Python requests-oauthlib (OAuth2Session)', () => {
    const client = python('requests_oauthlib_client.py');

    it('authorization code grant: fetch_token(client_secret=…) authenticates with Basic; the token opens a scoped route', async () => {
      const registered = await host.registerCodeClient();
      const result = await client('code', registered);
      expect(result.token_fields).toEqual(['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type']);
      expect(result.api).toEqual(allowed(USER.id, registered.clientId));
    });

    it('refresh token grant: the documented auto-refresh (auto_refresh_kwargs, secret in the body) and refresh_token(auth=Basic) keep the refresh token (SPEC §4.5)', async () => {
      const registered = await host.registerCodeClient();
      const result = await client('code', registered);
      expect(result.auto_refresh).toEqual({ api: allowed(USER.id, registered.clientId), updated: 1, new_access_token: true, kept_refresh_token: true });
      expect(result.basic_refresh).toEqual({ api: allowed(USER.id, registered.clientId), new_access_token: true, kept_refresh_token: true });
      // refresh_token() with neither auth nor client_id/client_secret sends no client credentials at all.
      expect(result.unauthenticated_refresh).toEqual({ error: 'invalid_client' });
    });

    it('client credentials grant: BackendApplicationClient + fetch_token(client_secret=…); no refresh token', async () => {
      const registered = await host.registerCredentialsClient();
      const result = await client('credentials', registered);
      expect(result.token_fields).toEqual(['access_token', 'expires_at', 'expires_in', 'token_type']);
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });

    it('client credentials grant with an imported secret holding + and %, which it sends in Basic as it is (SPEC §2)', async () => {
      const registered = await host.registerCredentialsClient({ importedSecret: IMPORTED_SECRET });
      const result = await client('credentials', registered);
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });

    it('client credentials grant with an imported non-ASCII secret, which it sends in Basic as ISO-8859-1', async () => {
      const registered = await host.registerCredentialsClient({ importedSecret: NON_ASCII_SECRET });
      const result = await client('credentials', registered);
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });
  });

  describe('Python Authlib (requests OAuth2Session)', () => {
    const client = python('authlib_client.py');

    it('authorization code grant with the default client_secret_basic; the token opens a scoped route', async () => {
      const registered = await host.registerCodeClient();
      const result = await client('code', registered);
      expect(result.token_fields).toEqual(['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type']);
      expect(result.api).toEqual(allowed(USER.id, registered.clientId));
    });

    it('refresh token grant: an expired token is refreshed before the request, and refresh_token() keeps the refresh token (SPEC §4.5)', async () => {
      const registered = await host.registerCodeClient();
      const result = await client('code', registered);
      expect(result.auto_refresh).toEqual({ api: allowed(USER.id, registered.clientId), new_access_token: true, kept_refresh_token: true });
      expect(result.explicit_refresh).toEqual({ api: allowed(USER.id, registered.clientId), kept_refresh_token: true });
    });

    it('client credentials grant: fetch_token(grant_type="client_credentials"); no refresh token', async () => {
      const registered = await host.registerCredentialsClient();
      const result = await client('credentials', registered);
      expect(result.token_fields).toEqual(['access_token', 'expires_at', 'expires_in', 'token_type']);
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });

    it('client credentials grant with an imported secret holding + and %, which it sends in Basic as it is (SPEC §2)', async () => {
      const registered = await host.registerCredentialsClient({ importedSecret: IMPORTED_SECRET });
      const result = await client('credentials', registered);
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });

    it('client credentials grant with an imported non-ASCII secret, which it sends in Basic as ISO-8859-1', async () => {
      const registered = await host.registerCredentialsClient({ importedSecret: NON_ASCII_SECRET });
      const result = await client('credentials', registered);
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });
  });

  describe('Go golang.org/x/oauth2', () => {
    const client = (mode: 'code' | 'credentials', registered: TestClient) => runClient(goClient, [], mode, registered);

    it('authorization code grant: Config.Exchange with AuthStyleAutoDetect; the token opens a scoped route', async () => {
      const registered = await host.registerCodeClient();
      const result = await client('code', registered);
      expect(result).toMatchObject({ token_type: 'Bearer', has_refresh_token: true, expires_in_future: true });
      expect(result.api).toEqual(allowed(USER.id, registered.clientId));
    });

    it('refresh token grant: TokenSource refreshes a stale token and carries the refresh token over; refreshing again works (SPEC §4.5)', async () => {
      const registered = await host.registerCodeClient();
      const result = await client('code', registered);
      expect(result.refresh).toEqual({ new_access_token: true, kept_refresh_token: true, api: allowed(USER.id, registered.clientId) });
      expect(result.second_refresh).toEqual({ new_access_token: true, kept_refresh_token: true, api: allowed(USER.id, registered.clientId) });
    });

    it('client credentials grant: clientcredentials.Config; no refresh token', async () => {
      const registered = await host.registerCredentialsClient();
      const result = await client('credentials', registered);
      expect(result).toMatchObject({ token_type: 'Bearer', has_refresh_token: false });
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });

    it('client credentials grant with an imported secret holding + and %, which it form-encodes in Basic (RFC 6749 §2.3.1)', async () => {
      const registered = await host.registerCredentialsClient({ importedSecret: IMPORTED_SECRET });
      const result = await client('credentials', registered);
      expect(result).toMatchObject({ token_type: 'Bearer', has_refresh_token: false });
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });

    it('client credentials grant with an imported non-ASCII secret, which it form-encodes as UTF-8 in Basic', async () => {
      const registered = await host.registerCredentialsClient({ importedSecret: NON_ASCII_SECRET });
      const result = await client('credentials', registered);
      expect(result.api).toEqual(allowed(null, registered.clientId));
    });
  });
});
