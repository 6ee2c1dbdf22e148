// What an Allow on the consent page records: the scopes just approved, kept beside those approved before.
import type { OAuthClient, Store } from '../stores/contract.js';
import type { ResolvedOptions } from '../options.js';
import { isConsentCurrent } from '../checks/consent-current.js';
import { isAllAccess, withinAllowedScope } from '../checks/grant-scope.js';

/**
 * The scope to remember once `userId` has allowed `approved` for `client` on the consent page: what the user had
 * already approved for the integration, still within what it may be granted, together with `approved`. An Allow
 * answers the request on the page; it does not take back what the page did not ask about (incremental
 * authorization: a client asking for `write` after `read` is not asked for `read` again; Spring Authorization
 * Server adds the approved scopes to the consent it finds, too). An all-access approval, or an all-access consent
 * the integration may still be granted, is all-access. A consent given to a deleted integration of the same id
 * counts for nothing. The consent is read here, at the decision, not when the page was shown, so a withdrawal
 * made while the page was open is not undone.
 * @see RFC 6749 §3.3, §4.1.1 (the resource owner grants the access request), RFC 6819 §5.2.3.3.
 */
export async function consentScopeAfterAllow(
  store: Store, options: Pick<ResolvedOptions, 'allAccessWithoutScopes' | 'scopes'>, userId: string, client: OAuthClient, approved: readonly string[],
): Promise<readonly string[]> {
  if (!store.consents || isAllAccess(approved, options)) return approved;
  const before = await store.consents.findConsent(userId, client.clientId);
  if (!before || !isConsentCurrent(before, client)) return approved;
  if (isAllAccess(before.scope, options)) return withinAllowedScope(before.scope, client.allowedScopes, options) ? before.scope : approved;
  // In the order the user first approved them, the new ones after.
  const kept = before.scope.filter((scope) => approved.includes(scope) || withinAllowedScope([scope], client.allowedScopes, options));
  return [...kept, ...approved.filter((scope) => !kept.includes(scope))];
}
