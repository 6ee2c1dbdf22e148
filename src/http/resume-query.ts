// The authorization request as it is kept and resumed: its validated parameters only, never the raw query.
const KEPT = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt', 'max_age'] as const;

/**
 * Rebuilds the query of an authorization request from the parameters this server reads, dropping every other
 * one (RFC 6749 §3.1: "The authorization server MUST ignore unrecognized request parameters"). What a session
 * keeps and what the login form carries is then bounded by those parameters' own limits (a registered
 * redirect_uri, a state of at most 2,048 characters…), not by the size of the URL a client chose to send.
 * @see RFC 6749 §3.1 (parameters without a value are omitted), §4.1.1; RFC 7636 §4.3.
 */
export function resumeQuery(query: URLSearchParams): string {
  const kept = new URLSearchParams();
  for (const name of KEPT) {
    // The first value sent, as the checks read it: an empty one counts as omitted (§3.1), so `state=&state=s1` is
    // state s1. Taking the first value, empty, dropped it, and the resumed request lost its state, its PKCE challenge
    // or its scope across the sign-in.
    const value = query.getAll(name).find((candidate) => candidate !== '');
    if (value !== undefined) kept.set(name, value);
  }
  return kept.toString();
}
