// Warns once when the host app's express-session cookie, which then carries the router's sign-ins, lacks the attributes the router's own has.

/** The attributes of express-session's `req.session.cookie` read here. */
interface SessionCookieLike {
  readonly secure?: boolean | 'auto';
  readonly sameSite?: boolean | string;
  readonly httpOnly?: boolean;
}

/** What the host's session cookie lacks on an https issuer: the names of the attributes, as `Set-Cookie` spells them. */
export function missingCookieAttributes(cookie: SessionCookieLike | undefined): string[] {
  if (!cookie) return [];
  const missing: string[] = [];
  if (cookie.secure !== true && cookie.secure !== 'auto') missing.push('Secure');
  const sameSite = typeof cookie.sameSite === 'string' ? cookie.sameSite.toLowerCase() : cookie.sameSite;
  if (sameSite !== 'lax' && sameSite !== 'strict' && sameSite !== true) missing.push('SameSite=Lax');
  if (cookie.httpOnly === false) missing.push('HttpOnly');
  return missing;
}

/**
 * Checks the first request that brings the host's session (`hostSession`, or a host express-session the router stepped
 * aside for) when the issuer is https: the router's own session cookie is `Secure`, `HttpOnly` and `SameSite=Lax`, and
 * a sign-in kept in the host's cookie without them can be sent over plain http or on cross-site POSTs. express-session's
 * own default has none but HttpOnly, and nothing else would say so. Logged once, as a warning: the cookie is the host's.
 * @see RFC 6265 §4.1.2.5–6, RFC 6265bis §4.1.2.7 (SameSite), RFC 6749 §10.12, RFC 9700 §4.7.
 */
export function createHostSessionCookieCheck(secureIssuer: boolean, warn: (message: string) => void): (req: unknown) => void {
  let checked = !secureIssuer;
  return (req) => {
    if (checked) return;
    checked = true;
    const missing = missingCookieAttributes((req as { session?: { cookie?: SessionCookieLike } }).session?.cookie);
    if (missing.length === 0) return;
    warn(`express-oauth-router: the issuer is https, but your express-session's cookie, which carries the router's sign-ins, is not ${missing.join(', ')}: `
      + "set cookie: { secure: true, sameSite: 'lax', httpOnly: true } in your session options (behind a TLS proxy, with trust proxy set, or express-session leaves a Secure cookie out)");
  };
}
