// Scope parsing and checks (RFC 6749 §3.3).
import { InvalidScopeError } from '../errors.js';

// scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Whether `scope` is one scope-token (printable ASCII, no space, `"` or `\`).
 * @see RFC 6749 §3.3.
 */
export function isScopeToken(scope: string): boolean {
  return SCOPE_TOKEN.test(scope);
}

/**
 * Throws a TypeError unless every entry is a valid scope-token.
 * @see RFC 6749 §3.3.
 */
export function checkScopeTokens(scopes: readonly string[]): void {
  for (const scope of scopes) {
    if (!isScopeToken(scope)) throw new TypeError(`scope ${JSON.stringify(scope)} is not a valid scope-token (RFC 6749 §3.3)`);
  }
}

/**
 * Parses a requested `scope` parameter ("a list of space-delimited, case-sensitive strings") and checks it
 * against what may be granted. Absent → `fallback` (the whole allowed set, RFC 6749 §3.3 "pre-defined
 * default value"). `authority` names what `allowed` is in the refusal: the client's registered scopes, or for a
 * refresh the original grant's (§6).
 * @throws InvalidScopeError for a malformed scope or one outside `allowed`.
 */
export function checkRequestedScope(
  requested: string | undefined, allowed: readonly string[], fallback = allowed, authority = 'not allowed for this client',
): string[] {
  if (requested === undefined) return [...fallback];
  const scopes = [...new Set(requested.split(' ').filter((s) => s.length > 0))];
  if (requested.length > 0 && (scopes.length === 0 || requested.split(' ').some((s) => s.length === 0))) {
    throw new InvalidScopeError('scope must be space-delimited scope tokens');
  }
  for (const scope of scopes) {
    if (!SCOPE_TOKEN.test(scope)) throw new InvalidScopeError('scope must be space-delimited scope tokens of printable ASCII');
    if (!allowed.includes(scope)) throw new InvalidScopeError(`the requested scope includes a value ${authority}`);
  }
  return scopes;
}
