// The mark on the authorization address that a click on an expired consent page was not taken: the page says so.

/**
 * The query parameter the consent endpoint adds when it sends an expired form's Allow back to the authorization
 * endpoint. It is the router's, not the integration's: the authorization endpoint takes it off before reading the
 * request, so it is never part of the request kept, resumed or answered. It carries no secret and decides nothing:
 * a link holding it shows the same notice, which is all a forged POST can get too (the notice says nothing was sent).
 */
export const EXPIRED_CONSENT_NOTICE = 'oauth_router_notice=consent_expired';

/** `query` (already encoded) with the notice's mark added. */
export function withExpiredConsentNotice(query: string): string {
  return query === '' ? EXPIRED_CONSENT_NOTICE : `${query}&${EXPIRED_CONSENT_NOTICE}`;
}

/**
 * The raw query string without the notice's mark (every other byte as the browser sent it: a `state` is returned
 * octet for octet), and whether the mark was there.
 * @see RFC 6749 §3.1 (the endpoint ignores parameters it does not recognize; this one it takes off).
 */
export function takeExpiredConsentNotice(query: string): { readonly query: string; readonly notice: boolean } {
  const name = EXPIRED_CONSENT_NOTICE.slice(0, EXPIRED_CONSENT_NOTICE.indexOf('='));
  const parts = query.split('&');
  const kept = parts.filter((part) => part.split('=', 1)[0] !== name);
  if (kept.length === parts.length) return { query, notice: false };
  return { query: kept.join('&'), notice: parts.includes(EXPIRED_CONSENT_NOTICE) };
}
