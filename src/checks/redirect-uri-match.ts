// Whether a redirect_uri of a request is one the integration registered: exactly, but for a loopback IP literal's port.

/**
 * A loopback IP literal over http (`http://127.0.0.1:PORT…`, `http://[::1]:PORT…`) split around its port: the text
 * before and after it, or `null` for any other URI. A port is 1–65535 without leading zeros, and must be followed
 * by the path, the query or the end, so `http://127.0.0.1:80@evil.example/` is not one.
 */
function loopbackParts(uri: string): string | null {
  const match = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]))(?::([1-9][0-9]{0,4}))?([/?].*)?$/s.exec(uri);
  if (!match || (match[2] !== undefined && Number(match[2]) > 65535)) return null;
  return `${match[1]!}\u0000${match[3] ?? ''}`;
}

/**
 * Whether `requested` is one of `registered`: the same string (RFC 9700 §2.1: exact string matching), or, for a
 * registered loopback IP literal over http, the same string with any port (RFC 8252 §7.3: "The authorization server
 * MUST allow any port to be specified at the time of the request for loopback IP redirect URIs, to accommodate
 * clients that obtain an available ephemeral port from the operating system at the time of the request"; RFC 9700
 * §2.1 makes the same exception). `localhost` is matched exactly: RFC 8252 §8.3 advises against it, and a name can
 * resolve elsewhere.
 * @see RFC 9700 §2.1, RFC 8252 §7.3, RFC 6749 §3.1.2.3.
 */
export function isRegisteredRedirectUri(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const parts = loopbackParts(requested);
  return parts !== null && registered.some((uri) => loopbackParts(uri) === parts);
}
