// The authorization_code grant: exchange a code for an access and a refresh token (SPEC §4.3).
import type { GrantContext, GrantHandler, TokenResponseBody } from './grant-context.js';
import type { AuthorizationCodeRecord } from '../stores/contract.js';
import { issueTokens, mintTokens, publishGrantRevoked, saveOptionsOf, tokenResponse, type IssueRequest } from './issue-tokens.js';
import { hashToken } from '../crypto/hash-token.js';
import { checkCodeVerifier } from '../checks/pkce.js';
import { InvalidGrantError, InvalidRequestError, RefusedSaveError } from '../errors.js';

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
 * Reports a replayed code and the revocation of its grant. The code's record is gone, so its client is the one
 * that presented it (authenticated), which is the code's own but for a stolen code tried elsewhere.
 * @see RFC 6749 §4.1.2, RFC 9700 §4.14.
 */
function publishReplay(context: GrantContext, grantId: string): void {
  const { options, issuer, client, req } = context;
  options.events.publish({ type: 'code.replayed', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, clientId: client.clientId, grantId });
  publishGrantRevoked(context, 'code_replay', grantId, null);
}

/**
 * The checks RFC 6749 §4.1.3 and RFC 7636 §4.6 make of a code's record against this request and its
 * authenticated client. Codes never change once saved, so a record peeked at answers them as the consumed
 * one would.
 * @throws InvalidGrantError naming the first check the record fails.
 */
function checkCode(context: GrantContext, record: AuthorizationCodeRecord, redirectUri: string): void {
  const { client, issuer, params } = context;
  // RFC 6749 §4.1.3: "ensure that the authorization code was issued to the authenticated confidential client".
  if (record.clientId !== client.clientId) throw new InvalidGrantError('authorization code was issued to another client');
  if (record.issuer !== issuer.issuer) throw new InvalidGrantError('authorization code was issued by another authorization server');
  // RFC 6749 §4.1.3: "ensure that the redirect_uri parameter is present … and … their values are identical".
  if (record.redirectUri !== redirectUri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
  // The integration's settings may have narrowed since the code was issued (updateClientSettings): a code
  // for a redirect URI no longer registered, or without a challenge once PKCE is required, is refused.
  if (!client.redirectUris.includes(record.redirectUri)) throw new InvalidGrantError('redirect_uri is no longer registered for this client');
  if (client.requirePkce && record.codeChallenge === null) throw new InvalidGrantError('this client now requires PKCE; authorize again');
  checkCodeVerifier(record.codeChallenge, params.get('code_verifier'));
}

/** What a code's record entitles the exchange to (SPEC §4.3: an access and a refresh token). */
function issueRequestOf(context: GrantContext, record: AuthorizationCodeRecord): IssueRequest {
  return {
    grantType: 'authorization_code',
    grantId: record.grantId,
    userId: record.userId,
    scope: record.scope,
    withRefreshToken: true,
    requestedScope: scopeRequestedAtAuthorization(record.scope, context.client.allowedScopes),
    // The code's issuing request read the consent and the integration after issuedAt, and this request read
    // the integration after startedAt: the earlier of the two covers both.
    authorizedAt: record.issuedAt < context.startedAt ? record.issuedAt : context.startedAt,
  };
}

/** A replayed code: its grant's tokens are revoked before the refusal (RFC 6749 §4.1.2). */
async function refuseReplay(context: GrantContext, grantId: string): Promise<never> {
  await context.store.tokens.revokeGrant(grantId);
  publishReplay(context, grantId);
  throw new InvalidGrantError('authorization code has already been used');
}

/** What the prefetch of a store with `codeRedemption` read: the code's key and its record, unconsumed. */
interface PeekedCode {
  readonly codeHash: string;
  readonly record: AuthorizationCodeRecord | null;
}

/**
 * The exchange in one store call (`Store.codeRedemption`): the record peeked at while the client was
 * authenticated is checked here, the tokens are minted, and `redeemCode` consumes the code and saves them
 * together. Resolves `undefined` when the peek found no live code or the record fails a check (or its user is
 * gone): the usual way then consumes the code first and refuses it with the same answer it always gave.
 * @see RFC 6749 §4.1.2, §4.1.3.
 */
async function redeemPeeked(context: GrantContext, peeked: PeekedCode, redirectUri: string): Promise<TokenResponseBody | undefined> {
  const redemption = context.store.codeRedemption;
  const { record } = peeked;
  if (!redemption || !record) return undefined;
  try {
    checkCode(context, record, redirectUri);
  } catch {
    return undefined;
  }
  if (context.userAuth.findUser && !(await context.userAuth.findUser(record.userId))) return undefined;
  const request = issueRequestOf(context, record);
  const minted = await mintTokens(context, request);
  const result = await redemption.redeemCode(peeked.codeHash, minted.access, minted.refresh, saveOptionsOf(context, request));
  if (result.kind === 'not_found') throw new InvalidGrantError('authorization code is invalid or expired');
  if (result.kind === 'replayed') return refuseReplay(context, result.grantId);
  // Consumed but not saved: a revocation overtook the code since it was issued (or the store found the
  // tokens were not of its grant). Either way the code is used up, as on the usual way.
  if (!result.saved) throw new RefusedSaveError();
  return tokenResponse(context, request, minted);
}

/**
 * Redeems an authorization code once.
 * - The code is consumed before anything else is checked, so a wrong redirect_uri or verifier still uses
 *   it up: an attacker gets one try per code.
 * - A replayed code revokes every token issued from it at once (RFC 6749 §4.1.2: "If an authorization code
 *   is used more than once, the authorization server MUST deny the request and SHOULD revoke (when possible)
 *   all tokens previously issued based on that authorization code"). The revocation leaves a tombstone, so
 *   when the replay overtakes the first redemption before that one saved its tokens, the store refuses the
 *   save and the first redemption gets `invalid_grant` too: no token of a replayed code ever outlives the
 *   replay, and no timing is involved.
 * - Tokens are authorized as of the code's `issuedAt`: a disable, a withdrawn consent or a rotated secret
 *   since the code was issued voids it (the store refuses the save), even if the integration was enabled or
 *   the consent given again in between.
 * - With a store that has `codeRedemption`, the code is read (not consumed) while the client is
 *   authenticated, and a code that passes every check is consumed and its tokens saved in one store call:
 *   the answers are the same, one round trip fewer.
 * @see RFC 6749 §4.1.3, RFC 7636 §4.6, SPEC §4.3.
 */
export const authorizationCodeGrant: GrantHandler = {
  grantType: 'authorization_code',
  flow: 'authorization_code',
  clientCopies: false,
  prefetch(store, params): Promise<PeekedCode> | undefined {
    const code = params.get('code');
    if (!store.codeRedemption || code === undefined) return undefined;
    // A read only: the code is consumed once the client is known (RFC 6749 §4.1.3), by redeemCode.
    const codeHash = hashToken(code);
    return store.codeRedemption.peekCode(codeHash).then((record) => ({ codeHash, record }));
  },
  async handle(context) {
    const { params, store } = context;
    const code = params.get('code');
    const redirectUri = params.get('redirect_uri');
    if (code === undefined) throw new InvalidRequestError('missing required parameter: code');
    // SPEC §4.3 makes redirect_uri required; RFC 6749 §4.1.3 requires it whenever the request had one.
    if (redirectUri === undefined) throw new InvalidRequestError('missing required parameter: redirect_uri');

    const peeked = await (context.prefetched as Promise<PeekedCode> | undefined);
    if (peeked) {
      const body = await redeemPeeked(context, peeked, redirectUri);
      if (body) return body;
    }
    const result = await store.codes.consumeCode(peeked?.codeHash ?? hashToken(code));
    if (result.kind === 'not_found') throw new InvalidGrantError('authorization code is invalid or expired');
    if (result.kind === 'replayed') return refuseReplay(context, result.grantId);
    const record = result.record;
    checkCode(context, record, redirectUri);
    if (context.userAuth.findUser && !(await context.userAuth.findUser(record.userId))) {
      await store.tokens.revokeGrant(record.grantId);
      publishGrantRevoked(context, 'user_deleted', record.grantId, record.userId);
      throw new InvalidGrantError('the user who granted access no longer exists');
    }
    return issueTokens(context, issueRequestOf(context, record));
  },
};
