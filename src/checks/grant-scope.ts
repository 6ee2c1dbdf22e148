// Which scope a request is granted, and what a token without a scope means (RFC 6749 §3.3, DESIGN §5).
import type { ResolvedOptions } from '../options.js';
import { checkRequestedScope } from './scope.js';
import { InvalidScopeError } from '../errors.js';

/** The options the scope rule reads. */
type ScopeOptions = Pick<ResolvedOptions, 'scopes' | 'allAccessWithoutScopes'>;

/**
 * Whether a token (or grant, or consent) of scope `scope` is all-access: no scope at all, on a server that
 * keeps `allAccessWithoutScopes` on. SPEC §2 has no scopes, so a SPEC integration's token must reach every route.
 * @see RFC 6749 §3.3, SPEC §2.
 */
export function isAllAccess(scope: readonly string[], options: Pick<ResolvedOptions, 'allAccessWithoutScopes'>): boolean {
  return scope.length === 0 && options.allAccessWithoutScopes;
}

/**
 * Whether the server knows `scope`: it is a key of the `scopes` option, or that option is empty (a server that declares
 * no vocabulary leaves each integration's registered scopes as the only limit, as before it could declare one).
 * @see RFC 6749 §3.3 (the scopes the authorization server supports), RFC 8414 §2 (`scopes_supported`).
 */
export function isKnownScope(scope: string, options: Pick<ResolvedOptions, 'scopes'>): boolean {
  return Object.hasOwn(options.scopes, scope) || !declaresScopes(options.scopes);
}

/** Whether the `scopes` option names any scope: asked per token request, so without listing the keys. */
function declaresScopes(scopes: ResolvedOptions['scopes']): boolean {
  for (const name in scopes) if (Object.hasOwn(scopes, name)) return true;
  return false;
}

/**
 * What an integration registered with `allowed` may be granted: those the server knows. A registration can hold
 * others (made before the vocabulary left one out, by a script or an `oauth-admin` that did not know it, written to
 * the store by hand): the router grants none of them.
 */
export function grantableScopes(allowed: readonly string[], options: Pick<ResolvedOptions, 'scopes'>): readonly string[] {
  // The usual registration holds known scopes only: it is answered as it is, without a copy.
  const known = (scope: string): boolean => isKnownScope(scope, options);
  return allowed.every(known) ? allowed : allowed.filter(known);
}

/**
 * The scopes a token issued with `scope` holds when it is presented (`requireBearer`, introspection): those the server
 * knows now. A scope dropped from the `scopes` option after the token was issued is not held, as none is granted any
 * more (`grantableScopes`). `scope` itself, without a copy, when the server knows every one of them or keeps no
 * vocabulary (the usual case); `null` when the token named scopes and the server knows none of them: such a token can
 * do nothing, and must not pass for one without a scope (all-access).
 * @see RFC 6749 §3.3, RFC 6750 §3.1 (`insufficient_scope`), RFC 7662 §2.2 (`scope`).
 */
export function heldScope(scope: readonly string[], options: Pick<ResolvedOptions, 'scopes'>): readonly string[] | null {
  const held = grantableScopes(scope, options);
  return held.length === 0 && scope.length > 0 ? null : held;
}

/**
 * The scope granted for a request, given what its authority `allowed` (the integration's registered scopes, or
 * for a refresh the grant's scope), less any scope the server does not know (`grantableScopes`):
 * - `allowed` non-empty: the requested subset, or all of `allowed` when no scope is sent (§3.3 default); when
 *   the server knows none of them, the request is refused: an empty scope would be all-access;
 * - `allowed` empty and all-access on: `[]` (all-access) when no scope is sent; a scope the server knows
 *   (`options.scopes`) narrows it, since all-access includes every scope;
 * - `allowed` empty and all-access off: `[]`, and any requested scope is refused.
 * `authority` ends the refusal's description (see `checkRequestedScope`).
 * @throws InvalidScopeError for a malformed scope or one outside what may be granted.
 * @see RFC 6749 §3.3, §6 ("MUST NOT include any scope not originally granted").
 */
export function grantScope(
  requested: string | undefined, allowed: readonly string[], options: ScopeOptions, authority?: string,
): string[] {
  if (allowed.length > 0 || !options.allAccessWithoutScopes) {
    const grantable = grantableScopes(allowed, options);
    if (allowed.length > 0 && grantable.length === 0) {
      throw new InvalidScopeError('none of the scopes this client may be granted is one this server supports');
    }
    return checkRequestedScope(requested, grantable, grantable, authority);
  }
  return checkRequestedScope(requested, Object.keys(options.scopes), [], authority);
}

/**
 * Whether a grant of `granted` (a code's or a refresh token's scope) is still within what the integration may be
 * granted (`allowed`, its registered scopes now). An all-access grant is within an integration still without
 * scopes only; a scoped one within every scope it names, or within an all-access integration; neither when it holds
 * a scope the server no longer knows (`isKnownScope`). So an integration narrowed by a write that revoked nothing
 * (two updates at once, a tool writing the store itself), or a scope dropped from the `scopes` option, cannot go on
 * minting, from grants issued before, the scope it lost.
 * @see RFC 6749 §3.3 (the authorization server's policy), §6 (a refresh keeps the scope granted), RFC 9700 §2.3.
 */
export function withinAllowedScope(
  granted: readonly string[], allowed: readonly string[], options: Pick<ResolvedOptions, 'allAccessWithoutScopes' | 'scopes'>,
): boolean {
  if (!granted.every((scope) => isKnownScope(scope, options))) return false;
  if (isAllAccess(allowed, options)) return true;
  if (isAllAccess(granted, options)) return false;
  return granted.every((scope) => allowed.includes(scope));
}

/**
 * Whether a remembered consent covers a new request: an all-access consent covers everything, an all-access
 * request only an all-access consent, and a scoped one the consent's scopes. A request names only scopes the server
 * knows (`grantScope`), so a consent's scope dropped from the `scopes` option covers nothing, and a consent left with
 * no known scope covers no scoped request; it never passes for an all-access one, since it named scopes.
 * @see RFC 6749 §4.1.1 (the resource owner grants the access request), RFC 6819 §5.2.3.3.
 */
export function consentCovers(consented: readonly string[], requested: readonly string[], options: ScopeOptions): boolean {
  if (isAllAccess(consented, options)) return true;
  if (isAllAccess(requested, options)) return false;
  return requested.every((scope) => consented.includes(scope));
}
