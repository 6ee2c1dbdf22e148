// Whether a request reached the router over https, as express-session judges it for the Secure session cookie.

/**
 * True for a TLS connection, or a first `X-Forwarded-Proto` of `https`: the rule express-session applies with
 * `proxy: true`, which the router sets for an https issuer. When it is false there, the session cookie (Secure)
 * is not set, so a sign-in would seem to succeed and lead back to the sign-in page.
 * @see RFC 6265 §4.1.2.5 (Secure), RFC 7239 §5.4 (the forwarded protocol).
 */
export function reachedOverHttps(req: { readonly socket: unknown; readonly headers: Readonly<Record<string, string | string[] | undefined>> }): boolean {
  if ((req.socket as { encrypted?: boolean } | null)?.encrypted === true) return true;
  const header = req.headers['x-forwarded-proto'];
  const value = Array.isArray(header) ? header[0] ?? '' : header ?? '';
  return value.split(',')[0]!.trim().toLowerCase() === 'https';
}
