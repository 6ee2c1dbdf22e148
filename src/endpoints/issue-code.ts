// Issues an authorization code for an approved request and returns the callback URL (RFC 6749 §4.1.2).
import type { AuthorizationCodeRecord } from '../stores/contract.js';
import type { AuthenticatedUser } from '../user-auth.js';
import type { PendingAuthorization } from '../http/oauth-session.js';
import type { PageContext } from './page-context.js';
import { createGrantId } from '../crypto/random-grant-id.js';
import { createCredential } from '../crypto/ordered-token.js';
import { hashToken } from '../crypto/hash-token.js';
import { redirectUriWithParams } from '../http/redirect-uri-with-params.js';
import { expiryAfter } from '../grants/latest-expiry.js';

/**
 * Makes a 256-bit code, stores only its hash — single use, bound to client, user, redirect_uri, PKCE
 * challenge and issuer, living `authorizationCodeTtl` seconds — records the consent when the user has just given
 * it (`consentScope`: what the consent holds from now on), and returns `redirect_uri?code=…&state=…&iss=…`. A code
 * issued on a remembered consent (`consentScope` null) records nothing: the request may be narrower than what the user approved, and writing its scope over the
 * consent would narrow it (the next wider `prompt=none` request then gets `consent_required`), move its "Allowed
 * on" date to the last use, and bring back a consent withdrawn while the request was in flight.
 * @see RFC 6749 §4.1.2 ("The authorization code MUST expire shortly after it is issued … maximum … 10
 * minutes"), §10.5, RFC 9207 §2.
 */
export async function issueCodeRedirect(
  context: PageContext,
  pending: PendingAuthorization,
  user: AuthenticatedUser,
  consentScope: readonly string[] | null,
): Promise<string> {
  const { store, options, issuer } = context;
  const code = createCredential(options.orderedTokens);
  const record: AuthorizationCodeRecord = {
    codeHash: hashToken(code),
    grantId: createGrantId(),
    clientId: pending.clientId,
    userId: user.id,
    redirectUri: pending.redirectUri,
    scope: pending.scope,
    codeChallenge: pending.codeChallenge,
    issuer: issuer.issuer,
    issuedAt: new Date(pending.createdAt),
    // Never past the year 9999, as tokens (latest-expiry.ts).
    expiresAt: new Date(expiryAfter(Date.now(), options.authorizationCodeTtl)),
  };
  await store.codes.saveCode(record);
  // Without the consents tier (a store run with rememberConsent and consentsPage off) nothing is recorded.
  if (consentScope !== null && store.consents) await store.consents.saveConsent({ userId: user.id, clientId: pending.clientId, scope: consentScope, grantedAt: new Date() });
  return redirectUriWithParams(pending.redirectUri, [['code', code], ['state', pending.state], ['iss', issuer.issuer]]);
}
