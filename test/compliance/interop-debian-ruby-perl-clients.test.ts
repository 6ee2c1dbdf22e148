// Interoperability: the Ruby and Perl OAuth clients Debian ships (ruby-oauth2 1.4 on Faraday, libnet-oauth2-perl
// 0.67) drive SPEC's three grants, both client authentications and the error answers against the router on a real
// port, run as child processes from test/interop-clients.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USER, type TestClient } from '../helpers/app.js';
import { runInteropClient, type Json } from '../helpers/interop-client-process.js';
import { startInteropHost, type InteropHost } from '../helpers/interop-host.js';

const ENABLED = process.env.OAUTH_TEST_DEBIAN_CLIENTS;
if (!ENABLED) console.log('set OAUTH_TEST_DEBIAN_CLIENTS=1 to run the Ruby and Perl client tests (Debian packages: see .ci/run)');

const CLIENTS = fileURLToPath(new URL('../interop-clients/', import.meta.url));
const RUBY = ['/usr/bin/ruby', join(CLIENTS, 'ruby/oauth2_client.rb')] as const;
const PERL = ['/usr/bin/perl', join(CLIENTS, 'perl/net_oauth2_client.pl')] as const;
const run = promisify(execFile);

/** A secret an earlier system issued: `+` and `%` read differently once form-decoded (RFC 6749 §2.3.1). */
const IMPORTED_SECRET = 's3cret+from%2019/ok=';
/** A secret with characters outside ASCII: UTF-8 in the form and in Basic, or ISO-8859-1 in Perl's Basic. */
const NON_ASCII_SECRET = 'clé+secrète%2019§';

/** An RFC 6749 §5.2 error as the scripts report it: the code the library exposes, and whether a description came. */
/** One way of authenticating the client: the script's environment for it, and whether it sends Basic. */
interface AuthStyle { readonly style: string; readonly env: Record<string, string>; readonly basic: boolean }

const rfcError = (error: string, status: number) => ({ error, status, has_description: true });

describe.skipIf(!ENABLED).concurrent('interoperability with the Ruby and Perl OAuth clients Debian ships', () => {
  let host: InteropHost;

  beforeAll(async () => {
    // With the variable set, a missing package fails the suite loudly instead of skipping it.
    await run(RUBY[0], ['-e', 'require "oauth2"']).catch((error: unknown) => {
      throw new Error(`OAUTH_TEST_DEBIAN_CLIENTS is set but Ruby cannot load oauth2 (apt-get install ruby-oauth2): ${String(error)}`);
    });
    await run(PERL[0], ['-MNet::OAuth2::Profile::WebServer', '-e', '1']).catch((error: unknown) => {
      throw new Error(`OAUTH_TEST_DEBIAN_CLIENTS is set but Perl cannot load Net::OAuth2 (apt-get install libnet-oauth2-perl): ${String(error)}`);
    });
    host = await startInteropHost();
  }, 60_000);
  afterAll(async () => { await host?.close(); });

  /** The API answered 200 with the token's identity (a scoped route: integrations without scopes are all-access). */
  const allowed = (userId: string | null, clientId: string) => ({ status: 200, body: expect.objectContaining({ clientId, userId }) });

  /** Runs `program` in `mode` with `client` at {auth_url}, and `extra` integrations for the credentials mode. */
  const drive = (program: readonly string[], mode: 'code' | 'credentials', client: TestClient, style: AuthStyle, extra: readonly Json[] = []): Promise<Json> =>
    runInteropClient(program[0]!, program.slice(1), mode, {
      CLIENT_ID: client.clientId, CLIENT_SECRET: client.clientSecret, SITE: host.url, REDIRECT_URI: 'https://client.example/callback',
      API_URL: host.apiUrl, EXTRA_CLIENTS: JSON.stringify(extra), ...style.env,
    });
  /** How many token requests authenticated `client` with Basic (the tests run side by side: told apart by client_id). */
  const basicRequests = (client: TestClient) => host.basicTokenClientIds.filter((id) => id === client.clientId).length;

  /** Integrations whose secrets need encoding, and a legacy one at {legacy_auth_url} (SPEC §9). */
  async function extraClients(): Promise<{ list: Json[]; imported: TestClient; nonAscii: TestClient; legacy: TestClient }> {
    const imported = await host.registerCredentialsClient({ importedSecret: IMPORTED_SECRET });
    const nonAscii = await host.registerCredentialsClient({ importedSecret: NON_ASCII_SECRET });
    const legacy = await host.registerCredentialsClient({ legacy: true });
    const entry = (label: string, client: TestClient, more: Json = {}) => ({ label, client_id: client.clientId, client_secret: client.clientSecret, ...more });
    return {
      imported, nonAscii, legacy,
      list: [entry('imported', imported), entry('non_ascii', nonAscii), entry('non_ascii_characters', nonAscii, { decode: true }),
        entry('legacy', legacy, { site: host.legacyUrl }), entry('legacy_absolute_token_path', legacy, { site: host.legacyUrl, token_url: '/oauth2/token' })],
    };
  }

  describe.each<{ name: string; program: readonly string[]; styles: AuthStyle[] }>([
    { name: 'Ruby oauth2 (OAuth2::Client)', program: RUBY, styles: [{ style: 'default (:request_body)', env: {}, basic: false }, { style: 'auth_scheme: :basic_auth', env: { AUTH_SCHEME: 'basic_auth' }, basic: true }] },
    { name: 'Perl Net::OAuth2 (Profile::WebServer, Profile::Password)', program: PERL, styles: [{ style: 'default (secrets_in_params)', env: {}, basic: false }, { style: 'secrets_in_params => 0 (Basic)', env: { SECRETS_IN_PARAMS: '0' }, basic: true }] },
  ])('$name', ({ program, styles }) => {
    // Each test starts its own process and registers its own integrations, so they run side by side (concurrent
    // tests assert with their context's expect).
    const ruby = program === RUBY;

    it.for(styles)('authorization code, refresh and revocation with $style: the RFC 6749 error codes reach the caller', { timeout: 60_000 }, async (style, { expect }) => {
      const registered = await host.registerCodeClient();
      const result = await drive(program, 'code', registered, style);
      // The exchange, three refreshes (the last one refused after the revocation), the replayed and the unknown code.
      expect(basicRequests(registered)).toBe(style.basic ? 6 : 0);
      const api = allowed(USER.id, registered.clientId);
      expect(result.state).toBe(ruby ? 'ruby-state' : 'perl-state');
      expect(result.token_fields).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
      expect(result.api).toEqual(api);
      // SPEC §4.5: no refresh_token in the refresh response; both libraries keep the one they sent.
      expect(result.refresh).toEqual(ruby
        ? { new_access_token: true, kept_refresh_token: true, api, second_refresh_api: api }
        : { new_access_token: true, kept_refresh_token: true, api });
      if (!ruby) expect(result.auto_refresh).toEqual({ api, new_access_token: true });
      // RFC 7009: revoking the refresh token ends the grant, access tokens included.
      expect(result.revoke).toEqual({
        status: 200, refresh: rfcError('invalid_grant', 400),
        ...(ruby ? { api: { status: 401, body: expect.objectContaining({ error: 'invalid_token' }) } } : {}),
      });
      expect(result.replayed_code).toEqual(rfcError('invalid_grant', 400));
      expect(result.unknown_code).toEqual(rfcError('invalid_grant', 400));
    });

    it.for(styles)('client credentials with $style, for generated, imported (+ %), non-ASCII and legacy secrets', { timeout: 60_000 }, async (style, { expect }) => {
      const registered = await host.registerCredentialsClient();
      const { list, imported, nonAscii, legacy } = await extraClients();
      const result = await drive(program, 'credentials', registered, style, list);
      // Its own token request and the one with a wrong secret; the extra integrations have other ids.
      expect(basicRequests(registered)).toBe(style.basic ? 2 : 0);
      expect(result.token_fields).toEqual(['access_token', 'expires_in', 'token_type']);
      expect(result.api).toEqual(allowed(null, registered.clientId));
      expect(result.wrong_secret).toEqual(rfcError('invalid_client', 401));
      expect(result.imported).toEqual({ api: allowed(null, imported.clientId) });
      expect(result.non_ascii).toEqual({ api: allowed(null, nonAscii.clientId) });
      // Perl: characters (a `use utf8` literal) go as UTF-8 in the form, as ISO-8859-1 in Basic. Ruby: as non_ascii.
      expect(result.non_ascii_characters).toEqual({ api: allowed(null, nonAscii.clientId) });
      expect(result.legacy).toEqual({ api: allowed(null, legacy.clientId) });
      // site {legacy_auth_url} with token path '/oauth2/token': both libraries resolve it against the host and drop
      // /legacy, and the main address refuses the legacy integration (invalid_client, naming {legacy_auth_url}).
      expect(result.legacy_absolute_token_path).toEqual(rfcError('invalid_client', 401));
    });
  });
});
