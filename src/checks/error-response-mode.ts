// Where an authorization request's error goes back: the redirect's query or, for a front-channel token request, its fragment.

/** The two places an error redirect may carry its parameters. */
export type ErrorResponseMode = 'query' | 'fragment';

/** The one value of `name`, or undefined when it is absent, empty or repeated (a repeated one is refused elsewhere). */
function once(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name).filter((value) => value !== '');
  return values.length === 1 ? values[0] : undefined;
}

/**
 * Where the error of an authorization request whose client and redirect_uri checked out is sent.
 * - `response_mode=query`, the one mode this server lists (`response_modes_supported`): the query, as asked;
 *   any other `response_mode` is not supported and is ignored, as an unknown parameter is (RFC 6749 §3.1);
 * - a `response_type` holding `token` or `id_token` (implicit or hybrid, which this server refuses): the fragment,
 *   which is where such a client reads its answer, error included (RFC 6749 §4.2.2.1; OAuth 2.0 Multiple Response
 *   Type Encoding Practices §5 makes it the default for every such type);
 * - anything else, a missing or repeated `response_type` included: the query (RFC 6749 §4.1.2.1).
 * @see RFC 6749 §4.1.2.1, §4.2.2.1; OAuth 2.0 Multiple Response Type Encoding Practices §2.1, §5.
 */
export function errorResponseMode(query: URLSearchParams): ErrorResponseMode {
  if (once(query, 'response_mode') === 'query') return 'query';
  const values = once(query, 'response_type')?.split(' ') ?? [];
  return values.includes('token') || values.includes('id_token') ? 'fragment' : 'query';
}
