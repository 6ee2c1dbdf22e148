// POST /oauth2/introspect: token introspection (RFC 7662) for resource servers in other processes.
import type { Request, Response } from 'express';
import type { Store, TokenRecord } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import { sendNoStoreJson } from '../http/json-response.js';
import { sendTokenEndpointError } from '../http/send-token-endpoint-error.js';
import { findPresentedToken } from './find-token.js';
import { readTokenRequest } from './read-token-request.js';
import type { ClientAuthRateLimit } from '../checks/client-auth-rate-limit.js';
import { answerTurn } from '../http/answer-turn.js';
import { heldScope } from '../checks/grant-scope.js';
import type { KeyRing } from '../jwt/key-ring.js';
import { hasJwsSegments, tokenKeyVerifies } from '../jwt/token-key-verifies.js';
import { looksLikeJws } from '../jwt/verify-access-token.js';
import type { JwtVerifier } from '../middleware/require-bearer.js';

/**
 * Builds the introspection endpoint of one base address. A client learns about its own tokens; the clients
 * named in `introspectionClients` (resource servers) about any token. Everything else — unknown, expired,
 * revoked, another client's token, or one another router on the same store issued — is `{"active":false}` and nothing more (§2.2: "the authorization
 * server … SHOULD NOT include any additional information about an inactive token").
 * `limit` is the router's `clientAuthRateLimit`, or null when it is off.
 * A refresh token is described without `token_type` (RFC 6749 §5.1 types access tokens only) and with
 * `token_use: "refresh_token"`. A scope the server no longer knows (`heldScope`) is left out of an access token's
 * `scope`; an access token left with none, or a refresh token holding one, is inactive.
 * A token of JWS compact shape is judged first as requireBearer judges it, one rule for both: with `verifyJwt`
 * (accessTokenFormat 'jwt', the verifier requireBearer uses) it must verify, by signature and claims, so a JWT whose key
 * no longer verifies (replaced as leaked, retired, dropped from `jwt.signingKeys`), or whose `aud` lacks the
 * `jwt.audience` configured now, is inactive though its record is found; with `tokenKeys` (accessTokenFormat 'opaque',
 * which honours a JWT issued before the switch by its record) its key must still verify.
 * @see RFC 7662 §2.1, §2.2, §4, RFC 9068 §4.
 */
export function createIntrospectionEndpoint(
  store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, limit: ClientAuthRateLimit | null,
  verifyJwt: JwtVerifier | null = null, tokenKeys: KeyRing | null = null,
) {
  // Tokens of this router's own base addresses: another router on the same store (a tenant of its own) saves its tokens
  // there too, and they are inactive here as they are to this router's requireBearer.
  const ownIssuers = new Set([options.main.issuer, ...(options.legacy ? [options.legacy.issuer] : [])]);
  return async function introspectionEndpoint(req: Request, res: Response): Promise<void> {
    // Pipelined behind another request: this one takes effect after it, or not at all if its answer cannot be sent.
    const turn = answerTurn(req, res);
    if (turn !== true && !(await turn)) return;
    try {
      const { client, token, hint } = await readTokenRequest(store, options, issuer, req, 'introspection', limit);
      // accessTokenFormat 'jwt': "active" means the token would be accepted (§2.2): a JWT requireBearer refuses (its key no longer verifies, its
      // `aud` is not the audience configured now: RFC 9068 §4), as any resource server reading the JWKS and validating
      // `aud` does, is inactive here too, record or not. Asked before the store, as requireBearer does, from the keys
      // already loaded: no token lookup is made for it, and the answer (which tells only what the JWKS and the token's
      // own claims tell) is the same whoever's token it is. An opaque token skips it.
      if (verifyJwt !== null && looksLikeJws(token) && (await verifyJwt(token)) === null) {
        sendNoStoreJson(res, 200, { active: false });
        return;
      }
      const mayIntrospect = (record: TokenRecord): boolean => ownIssuers.has(record.issuer)
        && (record.clientId === client.clientId || options.introspectionClients.has(client.clientId));
      // Another client's token is searched for as long as an unknown one (find-token.ts): the same answer, in the same lookups.
      const found = await findPresentedToken(store, token, hint, mayIntrospect);
      if (!found || !mayIntrospect(found.record)) {
        sendNoStoreJson(res, 200, { active: false });
        return;
      }
      // A JWT an opaque router honours by its record (`tokenKeys`): only while its key verifies, as requireBearer asks
      // once the record is found (so junk kids, of no record, never make the keys be read). Only the caller's own
      // tokens (or an introspection client's) get this far: what it tells, it tells about those.
      if (tokenKeys !== null && hasJwsSegments(token) && !(await tokenKeyVerifies(tokenKeys, token))) {
        sendNoStoreJson(res, 200, { active: false });
        return;
      }
      const { record } = found;
      // A scope dropped from the `scopes` option since the token was issued is not held: an access token is described
      // without it, or inactive when none is left (never as one without a scope, which reads as all-access); a
      // refresh token holding one is inactive, as the token endpoint refuses it (invalid_grant).
      const scope = heldScope(record.scope, options);
      if (scope === null || (found.kind !== 'access_token' && scope.length !== record.scope.length)) {
        sendNoStoreJson(res, 200, { active: false });
        return;
      }
      sendNoStoreJson(res, 200, {
        active: true,
        // §2.2: scope is OPTIONAL; a token without a scope has none to list (all-access: allAccessWithoutScopes).
        ...(scope.length > 0 ? { scope: scope.join(' ') } : {}),
        client_id: record.clientId,
        // §2.2: token_type is a type of RFC 6749 §5.1, which only an access token has. A refresh token says what it
        // is in `token_use` (an extension field, §2.2, as Ory Hydra names it), so a resource server that accepts
        // only `token_type: "Bearer"` never takes one for an access token.
        ...(found.kind === 'access_token' ? { token_type: 'Bearer' } : { token_use: 'refresh_token' }),
        exp: Math.floor(record.expiresAt.getTime() / 1000),
        ...(record.userId !== null ? { sub: record.userId } : {}),
        iss: record.issuer,
      });
    } catch (err) {
      sendTokenEndpointError(res, err, options, 'introspection');
    }
  };
}
