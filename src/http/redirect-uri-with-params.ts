// Builds the callback URL: the registered redirect_uri, byte for byte, plus response parameters.

/** A parameter's value: a string to percent-encode, one encoded already, or absent (skipped). */
export type ParamValue = string | { readonly encoded: string } | undefined;

/**
 * Appends parameters to `redirectUri` without re-encoding its existing query (RFC 6749 §3.1.2: "MUST retain
 * the query component when adding additional query parameters"). Absent values are skipped.
 * @see RFC 6749 §4.1.2, §4.1.2.1; RFC 9207 §2 (`iss`).
 */
export function redirectUriWithParams(redirectUri: string, params: ReadonlyArray<readonly [string, ParamValue]>): string {
  const query = encodeParams(params);
  if (query.length === 0) return redirectUri;
  const separator = !redirectUri.includes('?') ? '?' : redirectUri.endsWith('?') || redirectUri.endsWith('&') ? '' : '&';
  return `${redirectUri}${separator}${query}`;
}

/**
 * `name=value&…`, each part percent-encoded (an already encoded value as it is), absent values skipped: the
 * form the query and the fragment of a redirect both carry.
 * @see RFC 6749 Appendix B, §4.1.2, §4.2.2.
 */
export function encodeParams(params: ReadonlyArray<readonly [string, ParamValue]>): string {
  return params
    .filter((pair): pair is readonly [string, NonNullable<ParamValue>] => pair[1] !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${typeof value === 'string' ? encodeURIComponent(value) : value.encoded}`)
    .join('&');
}
