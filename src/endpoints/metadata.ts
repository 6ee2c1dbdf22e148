// GET /.well-known/oauth-authorization-server: authorization server metadata (RFC 8414).
import type { Request, Response } from 'express';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';

/**
 * The metadata document of one base address, built once. Generic clients configure themselves from it.
 * @see RFC 8414 §2 (fields, `*_endpoint_auth_methods_supported` from the `clientAuthMethods` option), §3
 * (location), RFC 9207 §3 (`authorization_response_iss_parameter_supported`), RFC 7009, RFC 7662, RFC 7636 §6.2.
 */
export function buildMetadata(options: ResolvedOptions, issuer: ResolvedIssuer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const base = `${issuer.issuer}/oauth2`;
  const scopes = Object.keys(options.scopes);
  return {
    issuer: issuer.issuer,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    revocation_endpoint: `${base}/revoke`,
    introspection_endpoint: `${base}/introspect`,
    ...extra,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
    // One list for the three endpoints: they share one client authentication (RFC 7009 §2.1, RFC 7662 §2.1).
    token_endpoint_auth_methods_supported: [...options.clientAuthMethods],
    revocation_endpoint_auth_methods_supported: [...options.clientAuthMethods],
    introspection_endpoint_auth_methods_supported: [...options.clientAuthMethods],
    code_challenge_methods_supported: ['S256'],
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * Serves a prebuilt metadata document, which may be cached for five minutes: by shared caches too (`public`), unless
 * `sharedByHost`, when another issuer answers on the same path and the host picks the document. A shared cache
 * files an answer under a key and Vary values the app never sees (nginx matches `Vary: Host` against the client's
 * Host line while an absolute-form target sets the host it passes on; many CDNs ignore Vary), so there one request
 * could make it serve the other host's document to every client: `private` keeps it to each client's own cache.
 * @see RFC 8414 §3.2 (200, application/json), RFC 9111 §5.2.2.7 (private), the Fetch standard (`X-Content-Type-Options: nosniff`).
 */
export function createMetadataEndpoint(metadata: Record<string, unknown>, sharedByHost = false) {
  const body = Buffer.from(JSON.stringify(metadata), 'utf8');
  const cacheControl = sharedByHost ? 'private, max-age=300' : 'public, max-age=300';
  return function metadataEndpoint(_req: Request, res: Response): void {
    // The router's answer, not the host's app: it names no framework, as its JSON endpoints and pages do not.
    res.removeHeader('X-Powered-By');
    res.setHeader('Content-Type', 'application/json;charset=UTF-8');
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('Access-Control-Allow-Origin', '*');
    // Readable from any origin: never to be sniffed as script or HTML (the host's helmet may not cover the router).
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Length', body.length);
    res.end(body);
  };
}
