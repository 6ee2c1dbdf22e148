// Warns at start-up, under NODE_ENV=production, about an issuer served over plain http on a host that is not loopback.
import type { ResolvedOptions } from '../options.js';

/** Loopback host names and addresses, where http is a local demo or a test rather than a deployment. */
function isLoopback(host: string): boolean {
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/**
 * Logs one warning per plain-http issuer (`{auth_url}`, `{legacy_auth_url}`) whose host is not loopback, when
 * NODE_ENV=production. Not a refusal: a host may run a staging copy on http on purpose. But there client secrets,
 * codes and tokens cross the network in clear, the session and CSRF cookies cannot be `__Host-` cookies, and another
 * port of the host can plant a signed-in session (README "Security").
 * @see RFC 6749 §3.1 and §3.2 (the authorization and token endpoints MUST require TLS), §10.9, RFC 8414 §2 (an
 *   issuer uses https), RFC 9700 §4.
 */
export function warnPlainHttpIssuer(options: ResolvedOptions, nodeEnv = process.env.NODE_ENV): void {
  if (nodeEnv !== 'production') return;
  for (const issuer of [options.main, ...(options.legacy ? [options.legacy] : [])]) {
    if (issuer.secure || isLoopback(issuer.host)) continue;
    options.logger.warn(`express-oauth-router: the issuer ${issuer.issuer} is plain http while NODE_ENV=production: client secrets, `
      + 'codes and tokens cross the network in clear, and the session cookies cannot be __Host- cookies (RFC 6749 §3.1, §3.2 '
      + 'require TLS). Serve it over https, or behind a proxy that terminates TLS with an https issuer and trust proxy set.');
  }
}
