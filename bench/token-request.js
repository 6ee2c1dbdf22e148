// The client_credentials token request the bench sends (Basic auth, form body), and a one-off fetch of a token.
import { benchCode } from './mint-codes.js';

/** @returns {{ method: 'POST', headers: Record<string, string>, body: string }} */
export function tokenRequest(clientId, clientSecret) {
  // RFC 6749 §2.3.1: form-encode id and secret before Base64.
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
  return {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  };
}

/**
 * Asks the server for an access token; throws unless it answers 200 with one.
 * @returns {Promise<string>} the access token
 */
export async function fetchAccessToken(server) {
  const response = await fetch(`${server.url}/oauth2/token`, tokenRequest(server.clientId, server.clientSecret));
  const body = await response.json();
  if (response.status !== 200 || typeof body.access_token !== 'string') {
    throw new Error(`token request answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

/**
 * The authorization_code exchange request of the integration bench/mint-codes.js registered, one pre-minted
 * code per request (autocannon's setupRequest), so no request replays a code. The codes are
 * `benchCode(codePrefix, codeBaseMs, i)`; past `codeCount` the requests fail (invalid_grant) and so does the run.
 */
export function codeExchangeRequests(server) {
  let next = 1; // code 0 is left for fetchRefreshToken
  const form = (code) => `grant_type=authorization_code&code=${encodeURIComponent(code)}&redirect_uri=${encodeURIComponent(server.redirectUri)}`;
  return {
    ...tokenRequest(server.codeClientId, server.codeClientSecret),
    // The same codes for wrk (bench/wrk.js), whose Lua script makes each body: numbered from 1, advanced per run.
    wrkCodes: { prefix: server.codePrefix, baseMs: server.codeBaseMs, first: 1, redirectUri: server.redirectUri },
    requests: [{
      setupRequest(request) {
        return { ...request, body: form(benchCode(server.codePrefix, server.codeBaseMs, next++)) };
      },
    }],
  };
}

/** The code exchange of pre-minted code `i` as a fetch init (bench/count-round-trips.js). */
export function codeExchangeInit(server, i) {
  return {
    ...tokenRequest(server.codeClientId, server.codeClientSecret),
    body: `grant_type=authorization_code&code=${encodeURIComponent(benchCode(server.codePrefix, server.codeBaseMs, i))}&redirect_uri=${encodeURIComponent(server.redirectUri)}`,
  };
}

/** Redeems pre-minted code 0 once; throws unless the answer is 200 with a refresh token. @returns {Promise<string>} */
export async function fetchRefreshToken(server) {
  const { headers } = tokenRequest(server.codeClientId, server.codeClientSecret);
  const body = `grant_type=authorization_code&code=${encodeURIComponent(benchCode(server.codePrefix, server.codeBaseMs, 0))}&redirect_uri=${encodeURIComponent(server.redirectUri)}`;
  const response = await fetch(`${server.url}/oauth2/token`, { method: 'POST', headers, body });
  const json = await response.json();
  if (response.status !== 200 || typeof json.refresh_token !== 'string') {
    throw new Error(`code exchange answered ${response.status}: ${JSON.stringify(json)}`);
  }
  return json.refresh_token;
}

/** The refresh_token request, one refresh token reused (SPEC §4.5: reusable until it expires). */
export function refreshRequest(server, refreshToken) {
  return {
    ...tokenRequest(server.codeClientId, server.codeClientSecret),
    body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(refreshToken)}`,
  };
}
