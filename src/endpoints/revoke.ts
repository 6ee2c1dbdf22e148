// POST /oauth2/revoke: token revocation (RFC 7009), client-authenticated like the token endpoint.
import type { Request, Response } from 'express';
import type { Store } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import { sendNoStoreJson } from '../http/json-response.js';
import { sendTokenEndpointError } from '../http/send-token-endpoint-error.js';
import { hashToken } from '../crypto/hash-token.js';
import { InvalidRequestError } from '../errors.js';
import { findPresentedToken } from './find-token.js';
import { readTokenRequest } from './read-token-request.js';
import type { ClientAuthRateLimit } from '../checks/client-auth-rate-limit.js';
import { answerTurn } from '../http/answer-turn.js';

/**
 * Builds the revocation endpoint of one base address.
 * - A refresh token revokes its whole grant, access tokens included ("If the particular token is a refresh
 *   token and the authorization server supports the revocation of access tokens, then the authorization
 *   server SHOULD also invalidate all access tokens based on the same authorization grant", §2.1).
 * - An access token revokes just itself.
 * - Unknown or already-revoked tokens answer 200 too ("invalid tokens do not cause an error response", §2.2).
 * - A live token revoked is reported as a `token.revoked` event (extent `grant` for a refresh token, `token`
 *   for an access token); an unknown one is not, nothing having been revoked, nor one whose revocation the store
 *   says another call made first (two revocations of one token at once: reported once).
 * - A token of another client is refused (§2.1: "verifies whether the token was issued to the client making
 *   the revocation request. If this validation fails, the request is refused").
 * `limit` is the router's `clientAuthRateLimit`, or null when it is off.
 * @see RFC 7009 §2.1, §2.2, §2.2.1.
 */
export function createRevocationEndpoint(store: Store, options: ResolvedOptions, issuer: ResolvedIssuer, limit: ClientAuthRateLimit | null) {
  return async function revocationEndpoint(req: Request, res: Response): Promise<void> {
    // Pipelined behind another request: this one takes effect after it, or not at all if its answer cannot be sent.
    const turn = answerTurn(req, res);
    if (turn !== true && !(await turn)) return;
    try {
      const { client, token, hint } = await readTokenRequest(store, options, issuer, req, 'revocation', limit);
      const found = await findPresentedToken(store, token, hint);
      if (found) {
        if (found.record.clientId !== client.clientId) throw new InvalidRequestError('the token was not issued to this client');
        const revoked = found.kind === 'refresh_token'
          ? await store.tokens.revokeGrant(found.record.grantId)
          : await store.tokens.revokeAccessToken(hashToken(token));
        // Only for a live token found here and revoked by this request: an unknown or already revoked one revoked
        // nothing to report, nor does one that a concurrent revocation removed first (the store answered `false`).
        const { record } = found;
        if (revoked !== false) options.events.publish({
          type: 'token.revoked', time: new Date(), issuer: issuer.issuer, ip: req.ip ?? null, cause: 'revocation_endpoint',
          extent: found.kind === 'refresh_token' ? 'grant' : 'token',
          clientId: record.clientId, userId: record.userId, grantId: record.grantId,
        });
      }
      sendNoStoreJson(res, 200, {});
    } catch (err) {
      sendTokenEndpointError(res, err, options, 'revocation');
    }
  };
}
