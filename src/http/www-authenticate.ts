// WWW-Authenticate challenges for client authentication (Basic) and bearer tokens (RFC 6750 §3).
import { toErrorDescription } from './error-description.js';

/** Quotes a value for an auth-param (RFC 9110 §11.2): only `"` and `\` need escaping. */
function quote(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\r\n]/g, ' ')}"`;
}

/**
 * `Basic realm="…"`, sent with 401 invalid_client.
 * @see RFC 6749 §5.2 ("MUST include the WWW-Authenticate response header field matching the authentication
 * scheme used by the client"), RFC 7617 §2.
 */
export function basicChallenge(realm: string): string {
  return `Basic realm=${quote(realm)}`;
}

/**
 * `Bearer realm="…"[, error="…", error_description="…", scope="…"]`.
 * @see RFC 6750 §3 ("If the request lacks any authentication information … SHOULD NOT include an error
 * code"), §3.1.
 */
export function bearerChallenge(realm: string, error?: { error: string; description: string; scope?: string }): string {
  let challenge = `Bearer realm=${quote(realm)}`;
  if (error) {
    challenge += `, error=${quote(error.error)}, error_description=${quote(toErrorDescription(error.description))}`;
    if (error.scope) challenge += `, scope=${quote(error.scope)}`;
  }
  return challenge;
}
