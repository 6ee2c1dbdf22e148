// Whether a request's host names an issuer's host, compared as RFC 9110 compares authorities, not as text.

/**
 * `host[:port]` in the form two spellings of one authority share: lower-cased (a host name is case-insensitive),
 * without the scheme's default port, and without the trailing dot of a fully qualified name (`example.com.`, which
 * DNS resolves to the same address). Anything else, another port included, is kept, so it stays another host.
 * @see RFC 9110 §4.2.3 (http(s) URI normalization: case-insensitive host, default port omitted), RFC 3986 §3.2.2,
 * RFC 1034 §3.1 (the trailing dot of an absolute domain name).
 */
export function normalizeHost(host: string, secure: boolean): string {
  const value = host.trim().toLowerCase();
  // An IPv6 literal is bracketed ([::1]:443): its own colons are not the port's.
  const colon = value.lastIndexOf(':');
  const hasPort = colon > value.lastIndexOf(']');
  let name = hasPort ? value.slice(0, colon) : value;
  let port = hasPort ? value.slice(colon + 1) : '';
  if (/^\d+$/.test(port)) port = String(Number(port));
  if (port === '' || port === (secure ? '443' : '80')) port = '';
  if (name.endsWith('.') && !name.startsWith('[')) name = name.slice(0, -1);
  return port ? `${name}:${port}` : name;
}

/**
 * True when `requestHost` (a Host or X-Forwarded-Host value) is the issuer's host under another spelling: the
 * issuer's address in upper case, with `:443` spelt out (Go's net/http sends the URL's port as written), or with a
 * trailing dot. Such a request is for that issuer, not for whichever issuer comes first.
 */
export function sameHost(issuerHost: string, requestHost: string, secure: boolean): boolean {
  // Every spelling starts with the issuer's host name in some case: the hosts of other requests (a proxy's own
  // upstream name, for every request behind it) are told apart by that, without normalizing them (~1 µs).
  const bracket = issuerHost.startsWith('[') ? issuerHost.indexOf(']') + 1 : 0;
  const colon = issuerHost.indexOf(':', bracket);
  let nameLength = colon === -1 ? issuerHost.length : colon;
  if (issuerHost.charCodeAt(nameLength - 1) === 0x2e) nameLength -= 1; // a trailing dot the issuer was given
  if (requestHost.length < nameLength || requestHost.slice(0, nameLength).toLowerCase() !== issuerHost.slice(0, nameLength)) return false;
  return normalizeHost(issuerHost, secure) === normalizeHost(requestHost, secure);
}
