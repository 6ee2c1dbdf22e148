// Validates a redirect URI at registration time, so that only safe, exact-matchable URIs are ever stored.

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Throws unless `uri` is an absolute https URL (or http on a loopback host), without a fragment
 * (RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment component") and without credentials.
 * @see RFC 9700 §2.1 (exact matching; https), RFC 8252 §7.3 (loopback).
 */
export function checkRegisteredRedirectUri(uri: string): void {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new TypeError(`redirect URI ${JSON.stringify(uri)} is not an absolute URL`);
  }
  if (uri.includes('#')) throw new TypeError(`redirect URI ${uri} must not have a fragment (RFC 6749 §3.1.2)`);
  if (url.username || url.password) throw new TypeError(`redirect URI ${uri} must not carry credentials`);
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
