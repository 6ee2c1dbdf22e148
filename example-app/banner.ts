// The start-up text: addresses, the demo user, the demo integrations and ready-to-paste commands.
import { redactStoreUrl } from './redact-store-url.js';
import type { DemoClients } from './seed.js';

/** What the banner shows. */
export interface BannerInput {
  readonly listenUrl: string;
  readonly authUrl: string;
  readonly legacyAuthUrl: string;
  readonly storeUrl: string;
  /** The scope vocabulary (OAUTH_SCOPES or the app's own); omitted: not shown. */
  readonly scopes?: readonly string[];
  /** Where login sessions live, e.g. `redis (key prefix oauth:sess:)`; omitted: not shown. */
  readonly sessions?: string;
  /** Sessions shared by instances on one store, but no SESSION_SECRET: each process signs with its own. */
  readonly warnSessionSecret?: boolean;
  readonly username: string;
  /** Shown only when generated at this start; `null` when it came from DEMO_PASSWORD. */
  readonly generatedPassword: string | null;
  readonly redirectUri: string;
  readonly demo: DemoClients;
}

function authorizeUrl(authUrl: string, clientId: string, redirectUri: string): string {
  const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'demo' });
  return `${authUrl}/oauth2/authorize?${query.toString()}`;
}

/**
 * Builds the banner. Client secrets appear only when this start registered the integrations: they exist
 * nowhere else (the store keeps hashes), so later starts print ids only and point at `rotate-secret`.
 */
export function formatBanner(input: BannerInput): string {
  const { authUrl, demo } = input;
  // Where clients reach the API: AUTH_URL's origin (a proxy's https address, say), whose paths reach the app as
  // they are (the router answers at AUTH_URL's path, the API at /api/v1). Without AUTH_URL it is listenUrl.
  const apiUrl = `${new URL(authUrl).origin}/api/v1`;
  const lines = [
    `Acme Sign example API listening on ${input.listenUrl}`,
    `  auth_url:        ${authUrl}  (${authUrl}/oauth2/authorize, ${authUrl}/oauth2/token)`,
    `  legacy_auth_url: ${input.legacyAuthUrl}`,
    `  store:           ${redactStoreUrl(input.storeUrl)}`,
    // oauth-admin cannot read the app's vocabulary: the same OAUTH_SCOPES makes it refuse a scope the app never grants.
    ...(input.scopes ? [`  scopes:          ${input.scopes.join(' ')}  (give oauth-admin OAUTH_SCOPES="${input.scopes.join(' ')}")`] : []),
    ...(input.sessions ? [`  sessions:        ${input.sessions}`] : []),
    ...(input.warnSessionSecret
      ? ['  SESSION_SECRET is not set: login sessions work on this instance only. Give every instance the same SESSION_SECRET.']
      : []),
    `  API:             GET|POST ${apiUrl}/envelopes, GET ${apiUrl}/me`,
    '',
    input.generatedPassword === null
      ? `Demo user: ${input.username} (password from DEMO_PASSWORD)`
      : `Demo user: ${input.username} / ${input.generatedPassword}  (generated for this run; set DEMO_PASSWORD to fix it)`,
    '',
  ];
  const cc = demo.clientCredentials;
  const code = demo.code;
  if (demo.created && cc?.clientSecret && code?.clientSecret) {
    const tokenUrl = `${authUrl}/oauth2/token`;
    lines.push(
      'First start: registered two demo integrations. Their secrets are shown only now (only hashes are stored):',
      '',
      `export CC_CLIENT_ID=${cc.clientId}`,
      `export CC_CLIENT_SECRET=${cc.clientSecret}`,
      `export CODE_CLIENT_ID=${code.clientId}`,
      `export CODE_CLIENT_SECRET=${code.clientSecret}`,
      '',
      'Client credentials flow: get a token and call the API:',
      '',
      `TOKEN=$(curl -s -u "$CC_CLIENT_ID:$CC_CLIENT_SECRET" -d grant_type=client_credentials -d client_id="$CC_CLIENT_ID" ${tokenUrl} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`,
      `curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"title":"NDA"}' ${apiUrl}/envelopes`,
      `curl -s -H "Authorization: Bearer $TOKEN" ${apiUrl}/envelopes`,
      '',
    );
  } else if (cc || code) {
    lines.push(
      'Demo integrations (registered at first start; their secrets are not shown again:',
      '`npx oauth-admin clients rotate-secret CLIENT_ID` issues a new one):',
      ...(cc ? [`  client_credentials: ${cc.clientId}`] : []),
      ...(code ? [`  authorization_code: ${code.clientId}`] : []),
      '',
    );
  } else {
    lines.push(`The store holds ${demo.total} integration(s); list them with \`oauth-admin clients list\`.`, '');
  }
  if (code) {
    lines.push(
      `Authorization code flow: open this in a browser, sign in as ${input.username} and allow:`,
      `  ${authorizeUrl(authUrl, code.clientId, input.redirectUri)}`,
      `  ${input.redirectUri} then shows the code and the curl that exchanges it (with $CODE_CLIENT_SECRET).`,
      '',
    );
  }
  lines.push('Press Ctrl+C to stop.');
  return lines.join('\n');
}
