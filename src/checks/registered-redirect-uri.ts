// Validates a redirect URI at registration time, so that only safe, exact-matchable URIs are ever stored.

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** What the authorization endpoint adds to a redirect URI (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207 §2). */
const RESPONSE_PARAMETERS = ['code', 'state', 'iss', 'error', 'error_description', 'error_uri'];

/**
 * The first response parameter that `uri`'s own query already carries, or `null`. The endpoint appends its
 * parameters to the registered query (RFC 6749 §3.1.2), so such a URI would make each one appear twice, and a
 * client reading the first value would take the registered one: a fixed code, state or issuer.
 * @see RFC 6749 §3.1 ("MUST NOT be included more than once"), RFC 9207 §2.4.
 */
export function responseParameterIn(uri: string): string | null {
  const query = uri.indexOf('?');
  if (query < 0) return null;
  const names = new URLSearchParams(uri.slice(query + 1).split('#')[0]);
  return RESPONSE_PARAMETERS.find((name) => names.has(name)) ?? null;
}

/**
 * A character RFC 3986 keeps out of URIs (controls, space, `\\ < > " { } | ^` and the backquote) or a `%` that starts
 * no escape. URL parsers disagree on them: WHATWG's (browsers') reads `https://good.example\\@evil.example/cb` as a
 * path on good.example, RFC 3986's as userinfo before evil.example; it drops a tab or newline where others keep it; and
 * the redirect's encoding escapes a lone `%`, so the callback would reach another path than the one registered.
 * Non-ASCII characters are left to the URL parser (internationalized names and paths, RFC 3987).
 */
const OUTSIDE_URI = /[\x00-\x20\x7f\\<>"{}|^`]|%(?![0-9A-Fa-f]{2})/;

/**
 * Throws unless `uri` is an absolute https URL (or http on a loopback host) of URI characters only, without a fragment
 * (RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment component"), without credentials, and
 * without a response parameter in its query (`responseParameterIn`).
 * @see RFC 9700 §2.1 (exact matching; https), RFC 8252 §7.3 (loopback), RFC 6749 §3.1, §3.1.2 (an absolute URI,
 *   RFC 3986 §4.3).
 */
export function checkRegisteredRedirectUri(uri: string): void {
  const outside = OUTSIDE_URI.exec(uri);
  if (outside) {
    throw new TypeError(`redirect URI ${JSON.stringify(uri)} has ${JSON.stringify(outside[0])}, which a URI may not hold (RFC 3986 §2): percent-encode it`);
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new TypeError(`redirect URI ${JSON.stringify(uri)} is not an absolute URL`);
  }
  if (uri.includes('#')) throw new TypeError(`redirect URI ${uri} must not have a fragment (RFC 6749 §3.1.2)`);
  if (url.username || url.password) throw new TypeError(`redirect URI ${uri} must not carry credentials`);
  const taken = responseParameterIn(uri);
  if (taken !== null) {
    throw new TypeError(`redirect URI ${uri} has ${taken} in its query, which the authorization response adds: it would be sent twice (RFC 6749 §3.1)`);
  }
  // No DNS name has a '*': one written there expects a pattern, which exact matching never applies.
  if (url.hostname.includes('*')) {
    throw new TypeError(`redirect URI ${uri} has a wildcard; redirect URIs match exactly, so register each one (RFC 9700 §2.1)`);
  }
  const loopback = LOOPBACK.has(url.hostname) || url.hostname.endsWith('.localhost');
  if (url.protocol === 'http:' && !loopback) {
    throw new TypeError(`redirect URI ${uri} must use https (http is allowed only for localhost) (RFC 9700 §2.1)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`redirect URI ${uri} must use https`);
  }
}
