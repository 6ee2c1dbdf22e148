// The CSP form-action source that lets a page's form end at an integration's redirect URI.

/**
 * The source expression for `redirectUri`'s origin in a `form-action` directive. An IPv6 literal host (`[::1]`, a
 * loopback redirect URI RFC 8252 §7.3 names) cannot be written as a CSP host-source, whose grammar has no brackets:
 * Chromium drops `http://[::1]:8080` as invalid, then blocks the redirect to it, so the flow never reaches the
 * integration. Such an origin is admitted by its scheme instead (`http:`), which is still no wider than the
 * consent form's own redirect may go: the router redirects only to the registered URI, matched exactly.
 * @see CSP Level 3 (the host-source grammar; form-action), RFC 8252 §7.3, RFC 6749 §3.1.2.3.
 */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.hostname.startsWith('[') ? url.protocol : url.origin;
}
