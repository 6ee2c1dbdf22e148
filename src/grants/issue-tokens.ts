// Makes and saves the tokens of one grant, and shapes the token response.
import { callHostHook } from '../http/call-host-hook.js';
import type { GrantContext, TokenResponseBody } from './grant-context.js';
import type { GrantType, TokenRecord } from '../stores/contract.js';
import type { RevocationCause } from '../events/event-types.js';
import { createCredential } from '../crypto/ordered-token.js';
import { hashToken } from '../crypto/hash-token.js';
import { InvalidGrantError, InvalidRequestError, RefusedSaveError, SettingsRefusalError } from '../errors.js';
import { answeredByHost } from '../http/answered-by-host.js';
import { connectionGone } from '../http/connection-gone.js';
import { withinAllowedScope } from '../checks/grant-scope.js';
import { signAccessToken } from '../jwt/sign-access-token.js';
import { expiryAfter, LATEST_EXPIRY_MS } from './latest-expiry.js';

/** What to issue. */
export interface IssueRequest {
  /** The grant being served, for the audit event. */
  readonly grantType: GrantType;
  readonly grantId: string;
  readonly userId: string | null;
  readonly scope: readonly string[];
  /** Only the authorization code exchange issues a refresh token (SPEC §5.4). */
  readonly withRefreshToken: boolean;
  /** The scope parameter the client sent, if any: `scope` is echoed when it differs (RFC 6749 §5.1). */
  readonly requestedScope: string | undefined;
  /**
   * When the authority behind the tokens was established (`SaveTokensOptions.authorizedAt`): the token
   * request's start, or for a code exchange the start of the request that issued the code.
   */
  readonly authorizedAt: Date;
  /** The request minted `grantId` and has shown it to no one (`SaveTokensOptions.newGrant`). */
  readonly newGrant?: boolean;
}

/**
 * Reports the revocation of one grant by the token endpoint (RFC 6749 §4.1.2, §10.4): a grant of the requesting
 * client, or of `clientId` when the store names another (a used code another integration presented).
 */
export function publishGrantRevoked(
  context: GrantContext, cause: RevocationCause, grantId: string, userId: string | null, clientId = context.client.clientId,
): void {
  const { options, issuer, req } = context;
  options.events.publish({
    type: 'token.revoked', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, cause, extent: 'grant',
    clientId, userId, grantId,
  });
}

/**
 * Refuses a code or refresh token whose scope the integration may no longer be granted: narrowing revokes them
 * (updateClientSettings), and this holds where a narrowing revoked nothing (two updates at once, a tool writing
 * the store). A `SettingsRefusalError`, so a request served from a stale integration copy is judged again.
 * @throws SettingsRefusalError. @see RFC 6749 §3.3, §6.
 */
export function requireScopeStillAllowed(context: GrantContext, scope: readonly string[], what: string): void {
  if (!withinAllowedScope(scope, context.client.allowedScopes, context.options)) {
    throw new SettingsRefusalError(`${what} scope is no longer allowed for this client; authorize again`);
  }
}

/**
 * Refuses a grant whose user no longer exists (`UserAuth.findUser` answered nothing), revoking it first so that
 * none of its tokens outlives the user. Without `findUser`, every user counts as existing.
 * @throws InvalidGrantError after the revocation.
 * @see RFC 6749 §5.2 (`invalid_grant`: "revoked"), RFC 7009 §2.1.
 */
export async function requireGrantUser(context: GrantContext, grantId: string, userId: string): Promise<void> {
  // Called on its object: a host's UserAuth may be a class whose findUser reads `this`.
  if (!context.userAuth.findUser || (await callHostHook('findUser', () => context.userAuth.findUser!(userId)))) return;
  // Reported only by the revocation that took effect: of several requests of a deleted user's grant, the first.
  if ((await context.store.tokens.revokeGrant(grantId)) !== false) publishGrantRevoked(context, 'user_deleted', grantId, userId);
  throw new InvalidGrantError('the user who granted access no longer exists');
}

/** Reports saved tokens: `token.refreshed` for the refresh_token grant, `token.issued` for the others. */
function publishIssued(context: GrantContext, request: IssueRequest): void {
  const common = {
    time: new Date(), issuer: context.issuer.issuer, ip: context.req.ip ?? null, clientId: context.client.clientId,
    userId: request.userId, grantId: request.grantId, scope: request.scope, refreshToken: request.withRefreshToken,
  };
  const { grantType } = request;
  context.options.events.publish(grantType === 'refresh_token'
    ? { type: 'token.refreshed', grantType, ...common }
    : { type: 'token.issued', grantType, ...common });
}

/**
 * Whether this request's answer can reach no one: the host has answered it (connect-timeout's 503), or its client reset
 * or half-closed the connection (connectionGone). Either way no client receives the tokens, nor knows they exist.
 * @see RFC 9112 §9.6 (tear-down).
 */
function unheard(context: GrantContext): boolean {
  return answeredByHost(context.res) || connectionGone(context.req, context.res);
}

/**
 * Revokes the tokens just saved for a request whose answer could no longer reach anyone once the save was done (the
 * host answered it meanwhile, connect-timeout's 503, or its client hung up): no client received them, so none may
 * stay live. A client that hung up is treated as one the host answered: the tokens are as undelivered, the client
 * retries (a refresh) or starts again (a spent code) alike, and tokens that no one holds serve nothing but a thief
 * of the store's records until they expire. Of a refresh, the new access token alone: the refresh token is
 * not rotated (SPEC §4.5), so the one the client holds is the one it retries with, and revoking it (or its grant) would
 * take from the client what it still rightly has. Of a code exchange or client_credentials, the grant, every token of
 * which this request issued (a code's grant is the code's own, a client_credentials grant is minted per request). The
 * code stays used: sent again it is `invalid_grant` (RFC 6749 §4.1.2), and its replay finds the grant revoked already,
 * so the revocation is reported once, here. A store that fails the revocation fails the request as any store error
 * does (its answer goes nowhere): the tokens then live until they expire, as they all did before this check.
 * @throws InvalidRequestError once revoked: the router's answer is written nowhere (the host's, or none, is the answer).
 * @see RFC 7009 §2.1, RFC 6749 §4.1.2, RFC 9700 §4.14.
 */
async function revokeUndelivered(context: GrantContext, request: IssueRequest, access: TokenRecord): Promise<never> {
  const { options, issuer, req, client, store } = context;
  if (request.grantType === 'refresh_token') {
    if ((await store.tokens.revokeAccessToken(access.tokenHash)) !== false) {
      options.events.publish({
        type: 'token.revoked', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, cause: 'undelivered', extent: 'token',
        clientId: client.clientId, userId: request.userId, grantId: request.grantId,
      });
    }
  } else if ((await store.tokens.revokeGrant(request.grantId)) !== false) {
    publishGrantRevoked(context, 'undelivered', request.grantId, request.userId);
  }
  throw new InvalidRequestError('the answer could reach no one once the tokens were saved');
}

/** `ms` rounded up to the whole second: a token lives at least the `expires_in` it is issued with (RFC 6749 §5.1). */
const wholeSecond = (ms: number): number => Math.ceil(ms / 1000) * 1000;

/**
 * Issues an access token (and a refresh token when asked) of `grantId`, saved hashed in one store call.
 * With `accessTokenFormat: 'jwt'` the access token is a signed RFC 9068 JWT; its record is saved by hash
 * all the same, so introspection, revocation and code-replay bookkeeping work alike for both formats.
 * @throws RefusedSaveError (`invalid_grant`) when a revocation overtook this request (a code replay, a disabled
 *   integration, a withdrawn consent, a rotated secret), or the integration copy it was authenticated with is
 *   stale: the store refused to save.
 * @see RFC 6749 §5.1, SPEC §2 (response fields), §4.3–4.5, RFC 9068 §2.
 */
export async function issueTokens(context: GrantContext, request: IssueRequest): Promise<TokenResponseBody> {
  const { options, client, issuer } = context;
  const now = Date.now();
  // Expiries fall on a whole second, as a JWT's `exp` and introspection's `exp` state them (RFC 7519 §2
  // NumericDate): a record kept to the millisecond would stay active up to 999 ms past the `exp` its token shows.
  // Rounded up, not down: rounded down, a token lived up to 999 ms less than the `expires_in` it was issued with.
  // Never past the year 9999 (latest-expiry.ts): a clock within a lifetime of it gets a token that ends then.
  const expiresAt = wholeSecond(expiryAfter(now, options.accessTokenTtl));
  const accessToken = options.accessTokenFormat === 'jwt' && context.keyRing
    ? signAccessToken(await context.keyRing.signer(), {
      issuer: issuer.issuer, audience: options.jwt.audience, clientId: client.clientId, userId: request.userId,
      scope: request.scope, grantId: request.grantId, issuedAt: now, expiresAt,
    })
    : createCredential(options.orderedTokens);
  const access: TokenRecord = {
    tokenHash: hashToken(accessToken),
    grantId: request.grantId,
    clientId: client.clientId,
    userId: request.userId,
    scope: request.scope,
    issuer: issuer.issuer,
    expiresAt: new Date(expiresAt),
  };
  let refreshToken: string | undefined;
  let refresh: TokenRecord | null = null;
  if (request.withRefreshToken) {
    refreshToken = createCredential(options.orderedTokens);
    refresh = { ...access, tokenHash: hashToken(refreshToken), expiresAt: new Date(wholeSecond(expiryAfter(now, options.refreshTokenTtl))) };
  }
  // The store refuses, atomically with the insert, tokens whose grant, integration or user was revoked since
  // authorizedAt: no token outlives a revocation that raced this request.
  // A client authenticated from the store's copy carries its revision: the save also refuses if it is stale.
  // Object literals of two fixed shapes, not one grown property by property: this is the token endpoint's hot path.
  const { authorizedAt } = request;
  const newGrant = request.newGrant === true;
  // The host has answered (connect-timeout's 503 during a slow findUser or key load), or the client has hung up:
  // tokens saved now would reach no one, so none is saved, and a refresh token stays as it was for the client's retry.
  // Checked as the save begins, with no await in between; the code of an exchange is used by now (it is consumed
  // before anything else).
  if (unheard(context)) throw new InvalidRequestError('the answer could reach no one before the tokens were saved');
  const saved = await context.store.tokens.saveTokens(access, refresh, context.clientRevision === undefined
    ? { authorizedAt, newGrant }
    : { authorizedAt, clientRevision: context.clientRevision, newGrant });
  if (saved !== true) {
    // `false` is the store's refusal; anything else breaks the contract (a store that forgot to return true), which
    // must not reach the client as "the grant has been revoked", nor the operator as nothing at all.
    if (saved !== false) throw new TypeError(`store.tokens.saveTokens resolved ${saved === null ? 'null' : typeof saved}, not true or false (Store contract)`);
    throw new RefusedSaveError();
  }
  // The host answered, or the client hung up, while the save was under way. From here to the answer's write
  // (sendNoStoreJson) every step is a promise continuation, which no timer (connect-timeout's) nor socket event (the
  // client's reset) can come between: this is the last moment either can happen unseen.
  if (unheard(context)) await revokeUndelivered(context, request, access);
  // Announced only once they will be delivered: tokens revoked as undelivered were issued to no one, and counted
  // as issued (oauth_tokens_issued_total) they would overstate what clients hold. Their token.revoked (cause
  // undelivered) is their record. Built only when heard: this is the token endpoint's hot path.
  if (options.events.active) publishIssued(context, request);
  const scope = request.scope.join(' ');
  // RFC 6749 §5.1: scope is "OPTIONAL, if identical to the scope requested by the client; otherwise, REQUIRED".
  // A token without a scope (an integration registered without scopes, as SPEC's are) has none to report, so
  // SPEC's response fields stay exactly as SPEC lists them (§4.3–4.5). A scoped integration that sent no scope
  // got its registered default, which differs from "nothing requested": it is told what it got.
  const echoScope = scope.length > 0 && scope !== request.requestedScope;
  return {
    access_token: accessToken,
    ...(refreshToken !== undefined ? { refresh_token: refreshToken } : {}),
    // The lifetime, unless the year 9999 cut it short: then the seconds left, rounded down, which it lives at least.
    expires_in: expiresAt === LATEST_EXPIRY_MS ? Math.floor((LATEST_EXPIRY_MS - now) / 1000) : options.accessTokenTtl,
    token_type: 'Bearer',
    ...(echoScope ? { scope } : {}),
  };
}
