// Which scope a request is granted, and what a token without a scope means (RFC 6749 §3.3, DESIGN §5).
import type { ResolvedOptions } from '../options.js';
import { checkRequestedScope } from './scope.js';

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
 * The scope granted for a request, given what its authority `allowed` (the integration's registered scopes, or
 * for a refresh the grant's scope):
 * - `allowed` non-empty: the requested subset, or all of `allowed` when no scope is sent (§3.3 default);
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
  if (allowed.length > 0 || !options.allAccessWithoutScopes) return checkRequestedScope(requested, allowed, allowed, authority);
  return checkRequestedScope(requested, Object.keys(options.scopes), [], authority);
}

/**
 * Whether a grant of `granted` (a code's or a refresh token's scope) is still within what the integration may be
 * granted (`allowed`, its registered scopes now). An all-access grant is within an integration still without
 * scopes only; a scoped one within every scope it names, or within an all-access integration. So an integration
 * narrowed by a write that revoked nothing (two updates at once, a tool writing the store itself) cannot go on
 * minting, from grants issued before, the scope it lost.
 * @see RFC 6749 §3.3 (the authorization server's policy), §6 (a refresh keeps the scope granted), RFC 9700 §2.3.
 */
export function withinAllowedScope(
  granted: readonly string[], allowed: readonly string[], options: Pick<ResolvedOptions, 'allAccessWithoutScopes'>,
): boolean {
  if (isAllAccess(allowed, options)) return true;
  if (isAllAccess(granted, options)) return false;
  return granted.every((scope) => allowed.includes(scope));
}

/**
 * Whether a remembered consent covers a new request: an all-access consent covers everything, an all-access
 * request only an all-access consent, and a scoped one the consent's scopes.
 * @see RFC 6749 §4.1.1 (the resource owner grants the access request), RFC 6819 §5.2.3.3.
 */
export function consentCovers(consented: readonly string[], requested: readonly string[], options: ScopeOptions): boolean {
  if (isAllAccess(consented, options)) return true;
  if (isAllAccess(requested, options)) return false;
  return requested.every((scope) => consented.includes(scope));
}
