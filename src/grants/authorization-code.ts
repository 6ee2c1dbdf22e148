// The authorization_code grant: exchange a code for an access and a refresh token (SPEC §4.3).
import type { GrantContext, GrantHandler, TokenResponseBody } from './grant-context.js';
import type { AuthorizationCodeRecord } from '../stores/contract.js';
import { issueTokens, publishGrantRevoked, requireGrantUser, requireScopeStillAllowed } from './issue-tokens.js';
import { hashToken } from '../crypto/hash-token.js';
import { checkCodeVerifier, checkCodeVerifierSyntax } from '../checks/pkce.js';
import { isRegisteredRedirectUri } from '../checks/redirect-uri-match.js';
import { grantableScopes } from '../checks/grant-scope.js';
import { InvalidGrantError, InvalidRequestError, RefusedSaveError, SettingsRefusalError } from '../errors.js';

/**
 * The scope parameter the authorization request sent, as far as the code tells: the code keeps only the granted
 * scope. A scope other than the integration's registered default can only have come from the request; the
 * default itself may have been granted to a request without scope, so it counts as not requested and is echoed
 * (RFC 6749 §5.1: echoing is OPTIONAL when identical, REQUIRED otherwise). All-access (`[]`) is never echoed.
 */
function scopeRequestedAtAuthorization(granted: readonly string[], registered: readonly string[]): string | undefined {
  const isDefault = granted.length === registered.length && granted.every((scope) => registered.includes(scope));
  return isDefault ? undefined : granted.join(' ');
}

/**
 * Handles a replayed code: reports it, then revokes its grant and reports the revocation. `code.replayed` names the
 * client that presented it (authenticated), which is the code's own but for a stolen code tried elsewhere, and is
 * published before the revocation is tried: the replay is the attack signal, and a store outage that fails the
 * revocation (503) must not hide it. `token.revoked` names the grant's integration and user as the store gives them
 * (a code presented by another integration revokes a grant that is not the presenter's; a store that gives no
 * integration leaves the presenter, and no user `null`), unless the store answers that the grant was revoked before
 * (a second replay of the code), which was reported then.
 * @see RFC 6749 §4.1.2, RFC 9700 §4.14.
 */
async function revokeReplayed(context: GrantContext, replay: { grantId: string; userId?: string; clientId?: string }): Promise<void> {
  const { options, issuer, client, req, store } = context;
  const { grantId } = replay;
  options.events.publish({ type: 'code.replayed', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, clientId: client.clientId, grantId });
  if ((await store.tokens.revokeGrant(grantId)) === false) return;
  publishGrantRevoked(context, 'code_replay', grantId, replay.userId ?? null, replay.clientId ?? client.clientId);
}

/**
 * Checks a consumed code against the request and the integration, then issues its tokens. Runs a second time,
 * with the integration looked up, only when the first run was served from a copy and what refused may have
 * come from the copy (its settings, or the save refusing its revision).
 * @see RFC 6749 §4.1.3, RFC 7636 §4.6.
 */
async function redeem(context: GrantContext, record: AuthorizationCodeRecord, redirectUri: string): Promise<TokenResponseBody> {
  const { client, issuer } = context;
  // RFC 6749 §4.1.3: "ensure that the authorization code was issued to the authenticated confidential client".
  if (record.clientId !== client.clientId) throw new InvalidGrantError('authorization code was issued to another client');
  if (record.issuer !== issuer.issuer) throw new InvalidGrantError('authorization code was issued by another authorization server');
  // RFC 6749 §4.1.3: "ensure that the redirect_uri parameter is present … and … their values are identical".
  if (record.redirectUri !== redirectUri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
  // The integration's settings may have narrowed since the code was issued (updateClientSettings): a code
  // for a redirect URI no longer registered, without a challenge once PKCE is required, or for a scope the
  // integration may no longer be granted (should a narrowing have revoked nothing) is refused.
  if (!isRegisteredRedirectUri(client.redirectUris, record.redirectUri)) throw new SettingsRefusalError('redirect_uri is no longer registered for this client');
  if (client.requirePkce && record.codeChallenge === null) throw new SettingsRefusalError('this client now requires PKCE; authorize again');
  requireScopeStillAllowed(context, record.scope, "the code's");
  checkCodeVerifier(record.codeChallenge, context.params.get('code_verifier'));
  await requireGrantUser(context, record.grantId, record.userId);
  return issueTokens(context, {
    grantType: 'authorization_code',
    grantId: record.grantId,
    userId: record.userId,
    scope: record.scope,
    withRefreshToken: true,
    requestedScope: scopeRequestedAtAuthorization(record.scope, grantableScopes(client.allowedScopes, context.options)),
    // The code's issuing request read the consent and the integration after issuedAt, and this request read
    // the integration after startedAt: the earlier of the two covers both.
    authorizedAt: record.issuedAt < context.startedAt ? record.issuedAt : context.startedAt,
  });
}

/**
 * Redeems an authorization code once.
 * - The code is consumed before anything else is checked, so a wrong redirect_uri or verifier still uses
 *   it up: an attacker gets one try per code. Only the request's own syntax is checked first (code and
 *   redirect_uri present, a code_verifier of RFC 7636 §4.1's form): nothing is compared there.
 * - A replayed code revokes every token issued from it at once (RFC 6749 §4.1.2: "If an authorization code
 *   is used more than once, the authorization server MUST deny the request and SHOULD revoke (when possible)
 *   all tokens previously issued based on that authorization code"). The revocation leaves a tombstone, so
 *   when the replay overtakes the first redemption before that one saved its tokens, the store refuses the
 *   save and the first redemption gets `invalid_grant` too: no token of a replayed code ever outlives the
 *   replay, and no timing is involved.
 * - Tokens are authorized as of the code's `issuedAt`: a disable, a withdrawn consent or a rotated secret
 *   since the code was issued voids it (the store refuses the save), even if the integration was enabled or
 *   the consent given again in between.
 * - Served from an integration copy (`clientCopies: 'resume'`), it cannot run again once the code is consumed,
 *   so it settles the copy itself: a replay revokes only once a lookup has authenticated the request too (a
 *   secret that only a stale copy still accepts revokes no one's grant), and a refusal by the integration's
 *   settings or by the save is judged again against the integration looked up. Every answer is then the one a
 *   lookup would have given, but that a request refused by the lookup (`invalid_client`) has used its code up.
 * @see RFC 6749 §4.1.3, RFC 7636 §4.6, SPEC §4.3.
 */
export const authorizationCodeGrant: GrantHandler = {
  grantType: 'authorization_code',
  flow: 'authorization_code',
  clientCopies: 'resume',
  async handle(context) {
    const { params, store } = context;
    const code = params.get('code');
    const redirectUri = params.get('redirect_uri');
    if (code === undefined) throw new InvalidRequestError('missing required parameter: code');
    // SPEC §4.3 makes redirect_uri required; RFC 6749 §4.1.3 requires it whenever the request had one.
    if (redirectUri === undefined) throw new InvalidRequestError('missing required parameter: redirect_uri');
    // A malformed verifier is a malformed request (RFC 6749 §5.2), answered before the code is spent.
    checkCodeVerifierSyntax(params.get('code_verifier'));

    const result = await store.codes.consumeCode(hashToken(code));
    if (result.kind === 'not_found') throw new InvalidGrantError('authorization code is invalid or expired');
    if (result.kind === 'replayed') {
      // Authenticated by a lookup first: a secret that only a stale integration copy still accepts revokes nothing.
      await revokeReplayed(await context.lookedUp?.() ?? context, result);
      throw new InvalidGrantError('authorization code has already been used');
    }
    try {
      return await redeem(context, result.record, redirectUri);
    } catch (err) {
      if (context.lookedUp === undefined || !(err instanceof SettingsRefusalError || err instanceof RefusedSaveError)) throw err;
      return redeem(await context.lookedUp(), result.record, redirectUri);
    }
  },
};
