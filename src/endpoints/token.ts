// POST /oauth2/token: authenticate the client, then run the grant named by grant_type (SPEC §4.2–4.5).
import type { Request, Response } from 'express';
import type { OAuthClient, Store } from '../stores/contract.js';
import type { UserAuth } from '../user-auth.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import type { KeyRing } from '../jwt/key-ring.js';
import { GRANTS } from '../grants/index.js';
import { TOKEN_PARAMETERS } from '../checks/parameter-label.js';
import { readForm, type FormParams } from '../http/read-form.js';
import { answerTurn } from '../http/answer-turn.js';
import { connectionGone } from '../http/connection-gone.js';
import { answeredByHost } from '../http/answered-by-host.js';
import { keepPeerAddress } from '../http/keep-peer-address.js';
import type { GrantContext, GrantHandler } from '../grants/grant-context.js';
import { sendNoStoreJson } from '../http/json-response.js';
import { authenticateAtIssuer } from '../checks/client-at-issuer.js';
import type { ClientAuthRateLimit } from '../checks/client-auth-rate-limit.js';
import {
  InvalidRequestError, InvalidScopeError, OAuthError, RefusedSaveError, SettingsRefusalError, UnauthorizedClientError, UnsupportedGrantTypeError,
} from '../errors.js';
import { sendTokenEndpointError } from '../http/send-token-endpoint-error.js';
import { logStoreAvailable, storeOutageOf } from '../http/store-outage-log.js';
import { tokenRequestChannel, type TokenRequestMessage } from '../metrics/channels.js';

/**
 * Starts the grant's read that needs no client (GrantHandler.prefetch). Should authentication fail, the answer
 * goes out without it, and its own failure then is nobody's to report: a handler is attached so that it is not
 * an unhandled rejection, while `handle` awaiting the same promise still sees it. A store that throws at once
 * leaves nothing prefetched, and `handle` reads for itself.
 */
function prefetch(grant: GrantHandler, store: Store, params: FormParams): Promise<unknown> | undefined {
  let started: Promise<unknown>;
  try {
    const value = grant.prefetch?.(store, params);
    if (value === undefined) return undefined;
    // A custom store's thenable (or plain value) becomes a promise that a handler can be attached to.
    started = Promise.resolve(value);
  } catch {
    return undefined;
  }
  started.catch(() => undefined);
  return started;
}

/**
 * Builds the token endpoint handler of one base address.
 * Order of checks: form → grant_type → client authentication → base address → flow → the grant itself (whose
 * read that needs no client, the refresh token's, is under way during authentication). A grant with
 * `clientCopies` may be served from the store's copy of the integration; when the copy proves stale, the request
 * is served again, once, with a lookup, or the code exchange judges again what the copy decided (see
 * `GrantHandler.clientCopies`, `Store.clientCopies`). Every other OAuth error under a copy is answered only once a
 * lookup authenticates the request too, so no answer depends on a stale copy.
 * Every answer, success or error, carries the SPEC §4.2 header set; invalid_client answers 401 with
 * `WWW-Authenticate: Basic` (RFC 6749 §5.2). Each answer's grant type, outcome and duration is reported on
 * the `express-oauth-router:token-request` diagnostics channel, measured only while someone subscribes.
 * `limit` is the router's `clientAuthRateLimit`, or null when it is off.
 * @see RFC 6749 §3.2, §4.1.3, §4.4.2, §5, §6; SPEC §4.2.
 */
export function createTokenEndpoint(
  store: Store, userAuth: UserAuth, options: ResolvedOptions, issuer: ResolvedIssuer, limit: ClientAuthRateLimit | null, keyRing?: KeyRing,
) {
  // Its store's outage log (the router's own, not the process's): whether an answer from the store ends an outage.
  const storeOutage = storeOutageOf(options);
  return async function tokenEndpoint(req: Request, res: Response): Promise<void> {
    // Pipelined behind another request: this one takes effect after it, or not at all if its answer cannot be sent.
    const turn = answerTurn(req, res);
    if (turn !== true && !(await turn)) return;
    // Taken before anything is read: a revocation at or after it voids what this request would issue.
    const startedAt = new Date();
    keepPeerAddress(req, options.events, limit !== null);
    const timed = tokenRequestChannel.hasSubscribers;
    const timedFrom = timed ? performance.now() : 0;
    let grantLabel = 'unknown';
    let outcome: TokenRequestMessage['outcome'] = 'success';
    try {
      const params = await readForm(req, options.bodyTimeout, TOKEN_PARAMETERS);
      const grantType = params.get('grant_type');
      if (grantType === undefined) throw new InvalidRequestError('missing required parameter: grant_type');
      const grant = GRANTS.get(grantType);
      if (!grant) throw new UnsupportedGrantTypeError(`grant_type is not supported; use ${[...GRANTS.keys()].join(', ')}`);
      grantLabel = grant.grantType;

      const prefetched = prefetch(grant, store, params);
      const authenticate = async (copies: boolean) => {
        const authenticated = await authenticateAtIssuer(store, options, issuer, req, params, 'token', limit, copies);
        // SPEC §5.5: "Integrations are configured for either the Authorization Code flow or the Client Credentials flow."
        if (grant.flow !== authenticated.client.flow) {
          // From a copy, the refusal stands only if the integration looked up authenticates the request too: a copy
          // kept after a disable or a rotated secret would otherwise answer unauthorized_client to a secret that no
          // longer authenticates, where a lookup answers invalid_client (RFC 6749 §5.2).
          if (authenticated.revision !== undefined) return authenticate(false);
          throw new UnauthorizedClientError(`this integration is configured for the ${authenticated.client.flow} flow and may not use grant_type ${grantType}`);
        }
        return authenticated;
      };
      // `from`: when the reads this serving relies on began (a revocation at or after it voids what it issues). `again`:
      // whether a save refused by a revocation may be served once more, from fresh reads.
      const serve = async (copies: boolean, prefetched: Promise<unknown> | undefined, from: Date, again: boolean) => {
        // One shape for every context of the endpoint: this is the token endpoint's hot path.
        const contextOf = (client: OAuthClient, clientRevision?: string, lookedUp?: () => Promise<GrantContext>): GrantContext =>
          ({ store, userAuth, options, issuer, client, clientRevision, lookedUp, params, keyRing, startedAt: from, req, res, prefetched });
        const { client, revision } = await authenticate(copies);
        // The client hung up during the body or the secret check, or the host answered meanwhile (connect-timeout's 503,
        // which tells the client to try again): a code spent or tokens saved now would reach nobody, and the code sent
        // again would be refused as used and revoke the grant.
        if (connectionGone(req, res) || answeredByHost(res)) throw new InvalidRequestError('the connection closed before the answer');
        if (revision === undefined) {
          if (!again) return grant.handle(contextOf(client));
          try {
            return await grant.handle(contextOf(client));
          } catch (err) {
            // A revocation committed while this request ran (`tokens revoke --client` beside a client_credentials
            // request): what it read before may be void, but the integration may still be entitled, so it is served
            // again from reads made after it, which answer as a request sent then would (a token, or invalid_client
            // for a disabled integration, invalid_grant for a revoked refresh token), not invalid_grant for a grant
            // the client never had. Once: a revocation in the same millisecond as the second serving's start still
            // refuses it (the store compares at or before, to the millisecond), and that answer stands.
            if (err instanceof RefusedSaveError) return null;
            throw err;
          }
        }
        let lookup: Promise<GrantContext> | undefined;
        const lookedUp = () => (lookup ??= authenticate(false).then((fresh) => contextOf(fresh.client)));
        const context = contextOf(client, revision, lookedUp);
        try {
          return await grant.handle(context);
        } catch (err) {
          // Served from a copy that may be stale (the save refused its revision, or its settings or scopes refused
          // the request): once more with a lookup, whose answer counts as if the copy had never been read.
          const copyMayHaveRefused = err instanceof RefusedSaveError || err instanceof SettingsRefusalError || err instanceof InvalidScopeError;
          if (grant.clientCopies === 'rerun' && copyMayHaveRefused) return null;
          // Any other OAuth error reached under a copy stands only if the integration, looked up, authenticates the
          // request as well; if it does not, its refusal is the answer, as it would have been without the copy. A
          // fault (the store out of reach) is answered at once: a lookup would only wait on the same store. Nor is
          // a request the host has answered looked up again (connect-timeout's 503): no one hears its answer.
          if (err instanceof OAuthError && !answeredByHost(res)) await lookedUp();
          throw err;
        }
      };
      const rerun = grant.clientCopies === 'rerun';
      const body = (await serve(grant.clientCopies !== false, prefetched, startedAt, rerun)) ?? (await serve(false, undefined, new Date(), false));
      if (body === null) throw new Error('a token request served without a copy came back for another try');
      sendNoStoreJson(res, 200, body);
      // The store answered this request: the end of an outage logged before is said (README, `logger` option).
      if (storeOutage.pending) logStoreAvailable(options);
    } catch (err) {
      // The host answered (connect-timeout's 503) or the client hung up: no answer of the router's reaches anyone, so
      // none is written nor counted as an error answer (oauth_errors_total would show a 400 nobody got).
      if (answeredByHost(res) || connectionGone(req, res)) {
        outcome = 'undelivered';
      } else {
        outcome = 'error';
        sendTokenEndpointError(res, err, options, 'token');
      }
    }
    if (timed) {
      tokenRequestChannel.publish({
        source: options.events, grantType: grantLabel, outcome, seconds: (performance.now() - timedFrom) / 1000,
      } satisfies TokenRequestMessage);
    }
  };
}
