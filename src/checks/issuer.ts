// Which base address a client belongs to (SPEC §9), and which one a request arrived at.
import type { Request } from 'express';
import type { OAuthClient } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import { requestHost } from '../http/request-host.js';
import { sameHost } from '../http/same-host.js';
import { requireSingleHeader } from '../http/authorization-header.js';

/**
 * The issuer whose credentials rules cover this client: the legacy one when its credentials were issued
 * strictly before the cutoff (SPEC §9: "Credentials issued before January 15th, 2021 use the legacy
 * authorization server"), otherwise the main one.
 */
export function issuerForClient(options: ResolvedOptions, client: OAuthClient): ResolvedIssuer {
  if (options.legacy && client.credentialsIssuedAt.getTime() < options.legacyCutoff.getTime()) return options.legacy;
  return options.main;
}

/**
 * The issuer a request addressed. When both issuers share a path prefix (two host names), the host decides (the
 * `Host` header, or `X-Forwarded-Host` from a proxy the host app trusts: `requestHost`), compared as an authority
 * (any case, the default port spelt out or not, a trailing dot or not: RFC 9110 §4.2.3), so no spelling of one
 * issuer's host reaches the other; an unknown host gets the main issuer. Otherwise the longest matching path prefix
 * does. Resolved per route at mount time where possible.
 * @throws InvalidRequestError when the host decides and the request has two Host lines (RFC 9112 §3.2: 400). Node
 * keeps the first, a proxy or cache in front may act on the last: two issuers would answer one request.
 */
export function issuerForRequest(candidates: readonly ResolvedIssuer[], req: Request): ResolvedIssuer {
  if (candidates.length === 1) return candidates[0]!;
  requireSingleHeader(req, 'host', 'Host');
  const host = requestHost(req);
  // The exact text first: what browsers and most clients send, without building a normalized copy.
  return candidates.find((issuer) => issuer.host === host)
    ?? candidates.find((issuer) => sameHost(issuer.host, host, issuer.secure))
    ?? candidates[0]!;
}

/**
 * The sentence naming the right address, for errors at the wrong one (SPEC §9, DESIGN §5). "First issued": the date
 * is the integration's (`credentialsIssuedAt`), which a secret rotation keeps, so its address never moves under it.
 */
export function wrongAddressMessage(options: ResolvedOptions, right: ResolvedIssuer): string {
  const cutoff = options.legacyCutoff.toISOString().slice(0, 10);
  return right.legacy
    ? `this integration's credentials were first issued before ${cutoff}: use the legacy authorization server at ${right.issuer}`
    : `this integration's credentials were first issued on or after ${cutoff}: use the authorization server at ${right.issuer}`;
}
