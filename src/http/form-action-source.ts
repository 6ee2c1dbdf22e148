// The CSP form-action source that lets a page's form end at an integration's redirect URI.

/**
 * The source expression for `redirectUri`'s origin in a `form-action` directive. The IPv6 loopback host `[::1]` (a
 * loopback redirect URI RFC 8252 §7.3 names, registrable over http) cannot be written as a CSP host-source, whose
 * grammar has no brackets: Chromium drops `http://[::1]:8080` as invalid, then blocks the redirect to it, so the flow
 * never reaches the integration. Such an origin is admitted by its scheme instead (`http:`, which CSP also lets match
 * https URLs): wider, on the pages of an integration registered with that URI only, and never chosen by a request,
 * since the router redirects only to a registered URI, matched exactly. Any other IPv6 literal keeps its origin,
 * which a browser may ignore, rather than widen the page's policy for a host that is not this machine.
 * @see CSP Level 3 (the host-source grammar; form-action), RFC 8252 §7.3, RFC 6749 §3.1.2.3.
 */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.hostname === '[::1]' ? url.protocol : url.origin;
}
