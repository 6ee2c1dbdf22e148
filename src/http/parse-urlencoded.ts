// WHATWG's application/x-www-form-urlencoded parser, as the platform implements it, for a whole body.

/**
 * The `[name, value]` pairs of `text` as WHATWG URL §5.1 parses them. `new URLSearchParams(string)` is that
 * parser with one addition for query strings handed over whole: it drops a leading `?`. A body is not a query
 * string, so a body `?grant_type=…` names a parameter `?grant_type` (as Node's querystring, Spring's servlet
 * parsing and oidc-provider read it), not `grant_type`. An `&` in front is an empty pair, which the parser skips,
 * and keeps the `?`.
 * @see WHATWG URL §5.1, URL §6.2 (the URLSearchParams constructor's `?`), RFC 6749 Appendix B.
 */
export function parseUrlencoded(text: string): Array<[string, string]> {
  return [...new URLSearchParams(`&${text}`)];
}
