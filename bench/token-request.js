// The client_credentials token request the bench sends (Basic auth, form body), and a one-off fetch of a token.

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
