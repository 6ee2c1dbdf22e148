// The authorization request a page form carries (login's `request_id`, consent's `resume`), validated again in full.
import type { PageContext } from './page-context.js';
import { decodeLoginRequest } from '../http/login-request.js';
import { OAuthError } from '../errors.js';
import {
  checkAuthorizationParameters, checkAuthorizationTarget, type AuthorizationTarget,
} from '../checks/authorization-request.js';
import type { PendingAuthorization } from '../http/oauth-session.js';

/**
 * Decodes the request a form carries and runs every check of GET /oauth2/authorize on it again, as of now: the
 * form is the browser's word, so nothing in it is trusted that the endpoint would not accept from a link.
 * @returns the integration and the validated request, or null when the form carries none or it no longer passes
 *   (its integration disabled, its redirect_uri unregistered since).
 * @throws what a store outage throws (a 5xx), so the page says the service is unavailable rather than "expired".
 * @see RFC 6749 §4.1.1, §4.1.2.1, §10.12.
 */
export async function resumeAuthorization(
  context: PageContext, encoded: unknown,
): Promise<{ readonly target: AuthorizationTarget; readonly pending: PendingAuthorization } | null> {
  const query = decodeLoginRequest(encoded);
  if (!query) return null;
  const { store, options, issuer } = context;
  try {
    const target = await checkAuthorizationTarget(store, options, issuer, query);
    return { target, pending: checkAuthorizationParameters(options, issuer, target, query, Date.now()) };
  } catch (err) {
    // Decided without toOAuthError, which logs and counts: the caller answers what is rethrown, and counted it twice.
    if (!(err instanceof OAuthError) || err.status >= 500) throw err;
    return null;
  }
}
