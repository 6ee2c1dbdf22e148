// How an error message names a request parameter without echoing what the request sent.

// The parameters of RFC 6749, RFC 7009, RFC 7636, RFC 7662 and of the router's own forms: server vocabulary.
const KNOWN = new Set([
  'response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt',
  'grant_type', 'code', 'code_verifier', 'refresh_token', 'client_secret', 'token', 'token_type_hint',
  'csrf_token', 'request_id', 'username', 'password', 'decision',
]);

/**
 * Whether this server reads a parameter of this name. Others are ignored, repeated or not (RFC 6749 §3.1: "The
 * authorization server MUST ignore unrecognized request parameters"; RFC 8707 repeats `resource`, say).
 */
export function isKnownParameter(name: string): boolean {
  return KNOWN.has(name);
}

/**
 * `parameter grant_type` for a parameter this server knows, `a parameter` for any other name: a name the
 * request made up is input, and error descriptions never echo input.
 * @see RFC 6749 §5.2 (error_description is for the client developer, not a mirror of the request).
 */
export function parameterLabel(name: string): string {
  return KNOWN.has(name) ? `parameter ${name}` : 'a parameter';
}
