// The authorization_code grant: exchange a code for an access and a refresh token (SPEC §4.3).
import { setTimeout as delay } from 'node:timers/promises';
import type { GrantHandler } from './grant-context.js';
import { issueTokens } from './issue-tokens.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { checkCodeVerifier } from '../checks/pkce.js';
import { InvalidGrantError, InvalidRequestError } from '../errors.js';

/**
 * How long a replayed redemption waits before it revokes the grant. Concurrent redemptions of one code have
 * one winner still saving its tokens; revoking at once would refuse that save (no token at all), revoking
 * after it lets the winner answer 200 and then kills its tokens exactly as a later replay would. A winner
 * slower than this is refused by the grant's tombstone: never a token that outlives the replay.
 */
const REPLAY_REVOCATION_GRACE_MS = 500;

/**
 * Redeems an authorization code once.
 * - The code is consumed before anything else is checked, so a wrong redirect_uri or verifier still uses
 *   it up: an attacker gets one try per code.
 * - A replayed code revokes every token issued from it (RFC 6749 §4.1.2: "If an authorization code is used
 *   more than once, the authorization server MUST deny the request and SHOULD revoke (when possible) all
 *   tokens previously issued based on that authorization code").
 * @see RFC 6749 §4.1.3, RFC 7636 §4.6, SPEC §4.3.
 */
export const authorizationCodeGrant: GrantHandler = {
  grantType: 'authorization_code',
  flow: 'authorization_code',
  async handle(context) {
    const { params, client, store, issuer } = context;
    const code = params.get('code');
    const redirectUri = params.get('redirect_uri');
    if (code === undefined) throw new InvalidRequestError('missing required parameter: code');
    // SPEC §4.3 makes redirect_uri required; RFC 6749 §4.1.3 requires it whenever the request had one.
    if (redirectUri === undefined) throw new InvalidRequestError('missing required parameter: redirect_uri');

    const result = await store.codes.consumeCode(hashSecret(code));
    if (result.kind === 'not_found') throw new InvalidGrantError('authorization code is invalid or expired');
    if (result.kind === 'replayed') {
      await delay(REPLAY_REVOCATION_GRACE_MS);
      await store.tokens.revokeGrant(result.grantId);
      throw new InvalidGrantError('authorization code has already been used');
    }
    const record = result.record;
    // RFC 6749 §4.1.3: "ensure that the authorization code was issued to the authenticated confidential client".
    if (record.clientId !== client.clientId) throw new InvalidGrantError('authorization code was issued to another client');
    if (record.issuer !== issuer.issuer) throw new InvalidGrantError('authorization code was issued by another authorization server');
    // RFC 6749 §4.1.3: "ensure that the redirect_uri parameter is present … and … their values are identical".
    if (record.redirectUri !== redirectUri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
    checkCodeVerifier(record.codeChallenge, params.get('code_verifier'));
    // A consent withdrawn after the code was issued also withdraws the code: no token may follow it.
    if (!(await store.consents.findConsent(record.userId, client.clientId))) {
      await store.tokens.revokeGrant(record.grantId);
      throw new InvalidGrantError('the user withdrew consent for this integration');
    }
    if (context.userAuth.findUser && !(await context.userAuth.findUser(record.userId))) {
      await store.tokens.revokeGrant(record.grantId);
      throw new InvalidGrantError('the user who granted access no longer exists');
    }
    return issueTokens(context, {
      grantId: record.grantId,
      userId: record.userId,
      scope: record.scope,
      withRefreshToken: true,
      requestedScope: record.scope.join(' '),
    });
  },
};
