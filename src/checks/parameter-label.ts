// How an error message names a request parameter without echoing what the request sent.

/**
 * What GET /oauth2/authorize reads: RFC 6749 §4.1.1, RFC 7636 §4.3, and OpenID Connect Core §3.1.2.1's `prompt`
 * and `max_age`.
 */
export const AUTHORIZATION_PARAMETERS: ReadonlySet<string> = new Set([
  'response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt', 'max_age',
]);

/** What POST /oauth2/token reads: RFC 6749 §2.3.1, §4.1.3, §4.4.2, §6; RFC 7636 §4.5. */
export const TOKEN_PARAMETERS: ReadonlySet<string> = new Set([
  'grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret',
]);

/** What the revocation and introspection endpoints read: RFC 7009 §2.1, RFC 7662 §2.1, RFC 6749 §2.3.1. */
export const TOKEN_MANAGEMENT_PARAMETERS: ReadonlySet<string> = new Set(['token', 'token_type_hint', 'client_id', 'client_secret']);

// Every name this server reads somewhere, its own forms' fields included: server vocabulary, safe to name in a message.
const KNOWN = new Set([
  ...AUTHORIZATION_PARAMETERS, ...TOKEN_PARAMETERS, ...TOKEN_MANAGEMENT_PARAMETERS,
  'csrf_token', 'request_id', 'username', 'password', 'decision',
]);

/**
 * `parameter grant_type` for a parameter this server knows, `a parameter` for any other name: a name the
 * request made up is input, and error descriptions never echo input.
 * @see RFC 6749 §5.2 (error_description is for the client developer, not a mirror of the request).
 */
export function parameterLabel(name: string): string {
  return KNOWN.has(name) ? `parameter ${name}` : 'a parameter';
}
