// The refresh_token grant: a new access token from a refresh token, without a new refresh token (SPEC §4.5).
import type { GrantHandler } from './grant-context.js';
import type { TokenRecord } from '../stores/contract.js';
import { issueTokens, requireGrantUser, requireScopeStillAllowed } from './issue-tokens.js';
import { hashToken } from '../crypto/hash-token.js';
import { grantScope } from '../checks/grant-scope.js';
import { InvalidGrantError, InvalidRequestError } from '../errors.js';

/**
 * Exchanges a refresh token for a new access token of the same grant. The refresh token is not rotated:
 * SPEC §4.5 says "No new refresh_token is returned", so it stays valid until it expires or its grant is
 * revoked. A narrower scope may be asked for (RFC 6749 §6: "MUST NOT include any scope not originally
 * granted"); without one the grant's scope is kept, all-access included. An all-access grant may be narrowed
 * to any scope the server knows. A grant whose scope the integration may no longer be granted is refused.
 * @see RFC 6749 §6, SPEC §4.5.
 */
export const refreshTokenGrant: GrantHandler = {
  grantType: 'refresh_token',
  flow: 'authorization_code',
  clientCopies: 'rerun',
  prefetch(store, params) {
    const refreshToken = params.get('refresh_token');
    return refreshToken === undefined ? undefined : store.tokens.findRefreshToken(hashToken(refreshToken));
  },
  async handle(context) {
    const { params, client, store, issuer } = context;
    const refreshToken = params.get('refresh_token');
    if (refreshToken === undefined) throw new InvalidRequestError('missing required parameter: refresh_token');
    const prefetched = context.prefetched as Promise<TokenRecord | null> | undefined;
    const record = await (prefetched ?? store.tokens.findRefreshToken(hashToken(refreshToken)));
    if (!record) throw new InvalidGrantError('refresh token is invalid, expired or revoked');
    // RFC 6749 §6: "validate the refresh token and ensure that it was issued to the authenticated client".
    if (record.clientId !== client.clientId) throw new InvalidGrantError('refresh token was issued to another client');
    if (record.issuer !== issuer.issuer) throw new InvalidGrantError('refresh token was issued by another authorization server');
    requireScopeStillAllowed(context, record.scope, "the refresh token's");
    const requestedScope = params.get('scope');
    const scope = grantScope(requestedScope, record.scope, context.options, 'not in the original grant (RFC 6749 section 6)');
    if (record.userId !== null) await requireGrantUser(context, record.grantId, record.userId);
    return issueTokens(context, {
      grantType: 'refresh_token',
      grantId: record.grantId,
      userId: record.userId,
      scope,
      withRefreshToken: false,
      // RFC 6749 §6: an omitted scope is "treated as equal to the scope originally granted".
      requestedScope: requestedScope ?? record.scope.join(' '),
      authorizedAt: context.startedAt,
    });
  },
};
