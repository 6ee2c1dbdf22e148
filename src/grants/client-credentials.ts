// The client_credentials grant: the integration gets an access token for itself (SPEC §4.4).
import type { GrantHandler } from './grant-context.js';
import { issueTokens } from './issue-tokens.js';
import { createGrantId } from '../crypto/random-grant-id.js';
import { grantScope } from '../checks/grant-scope.js';

/**
 * Issues an access token only: "A refresh token SHOULD NOT be included" (RFC 6749 §4.4.3), and SPEC §4.4
 * returns access_token, expires_in and token_type. Parameters other than grant_type, client_id and scope
 * are ignored (RFC 6749 §3.2: "MUST ignore unrecognized request parameters"). An integration registered
 * without scopes gets an all-access token unless it asks for a scope (see `grantScope`).
 * @see RFC 6749 §3.3, §4.4.2, SPEC §4.4.
 */
export const clientCredentialsGrant: GrantHandler = {
  grantType: 'client_credentials',
  flow: 'client_credentials',
  clientCopies: 'rerun',
  async handle(context) {
    const requestedScope = context.params.get('scope');
    const scope = grantScope(requestedScope, context.client.allowedScopes, context.options);
    return issueTokens(context, {
      grantType: 'client_credentials',
      grantId: createGrantId(),
      userId: null,
      scope,
      withRefreshToken: false,
      requestedScope,
      authorizedAt: context.startedAt,
      // Minted just above and shown to no one until the save commits: nothing can revoke it meanwhile.
      newGrant: true,
    });
  },
};
