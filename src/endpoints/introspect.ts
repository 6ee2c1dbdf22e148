// POST /oauth2/introspect: token introspection (RFC 7662) for resource servers in other processes.
import type { Request, Response } from 'express';
import type { Store } from '../stores/contract.js';
import type { ResolvedIssuer, ResolvedOptions } from '../options.js';
import { readForm } from '../http/read-form.js';
import { sendNoStoreJson } from '../http/json-response.js';
import { sendTokenEndpointError } from '../http/send-token-endpoint-error.js';
import { authenticateClientAtIssuer } from '../checks/client-at-issuer.js';
import { InvalidRequestError } from '../errors.js';
import { findPresentedToken } from './find-token.js';

/**
 * Builds the introspection endpoint of one base address. A client learns about its own tokens; the clients
 * named in `introspectionClients` (resource servers) about any token. Everything else — unknown, expired,
 * revoked, or another client's token — is `{"active":false}` and nothing more (§2.2: "the authorization
 * server … SHOULD NOT include any additional information about an inactive token").
 * @see RFC 7662 §2.1, §2.2, §4.
 */
export function createIntrospectionEndpoint(store: Store, options: ResolvedOptions, issuer: ResolvedIssuer) {
  return async function introspectionEndpoint(req: Request, res: Response): Promise<void> {
    try {
      const params = await readForm(req);
      const client = await authenticateClientAtIssuer(store, options, issuer, req, params);
      const token = params.get('token');
      if (token === undefined) throw new InvalidRequestError('missing required parameter: token');
      const found = await findPresentedToken(store, token, params.get('token_type_hint'));
      const visible = found && (found.record.clientId === client.clientId || options.introspectionClients.has(client.clientId));
      if (!found || !visible) {
        sendNoStoreJson(res, 200, { active: false });
        return;
      }
      const { record } = found;
      sendNoStoreJson(res, 200, {
        active: true,
        scope: record.scope.join(' '),
        client_id: record.clientId,
        token_type: found.kind === 'access_token' ? 'Bearer' : 'refresh_token',
        exp: Math.floor(record.expiresAt.getTime() / 1000),
        ...(record.userId !== null ? { sub: record.userId } : {}),
        iss: record.issuer,
      });
    } catch (err) {
      sendTokenEndpointError(res, err, options);
    }
  };
}
