// GET {issuer}/oauth2/jwks: the public keys that verify our JWT access tokens (RFC 7517 JWK Set).
import type { Request, Response } from 'express';
import type { KeyRing } from './key-ring.js';
import { toOAuthError } from '../http/to-oauth-error.js';
import { toErrorBody } from '../errors.js';
import { answeredByHost } from '../http/answered-by-host.js';
import type { OutageSource } from '../http/store-outage-log.js';

/** How long a resource server may keep a JWK Set it fetched (`Cache-Control: max-age`), in ms. */
export const JWKS_MAX_AGE_MS = 60_000;

/**
 * Serves `{ "keys": [ … ] }`: every published key (the signer and keys still inside their retirement
 * window) as a public JWK with kty, crv/x/y or n/e, kid, alg and use "sig". Never a private member.
 * Cached a minute: a resource server that meets an unknown kid is expected to fetch again anyway. Every answer,
 * the store's 503 too, carries `Access-Control-Allow-Origin: *`, so a browser app reads the refusal it got.
 * @see RFC 7517 §4, §5, RFC 9068 §4 (keys from the AS's metadata `jwks_uri`), RFC 8414 §2.
 */
export function createJwksEndpoint(keys: KeyRing, source: OutageSource) {
  return async function jwksEndpoint(_req: Request, res: Response): Promise<void> {
    // The router's answer, not the host's app: it names no framework, as its JSON endpoints and pages do not.
    res.removeHeader('X-Powered-By');
    // Readable from any origin, its refusals too: a browser app shown a 503 without it sees a CORS error instead.
    res.setHeader('Access-Control-Allow-Origin', '*');
    try {
      const published = await keys.publishedKeys();
      // The host answered while the store was read (connect-timeout's 503): a header set now would throw, and under
      // Express 4, which ignores this promise, its rejection would end the process.
      if (answeredByHost(res)) return;
      const body = Buffer.from(JSON.stringify({ keys: published.map((key) => key.publicJwk) }), 'utf8');
      res.setHeader('Content-Type', 'application/json;charset=UTF-8');
      res.setHeader('Cache-Control', `public, max-age=${JWKS_MAX_AGE_MS / 1000}`);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Length', body.length);
      res.end(body);
    } catch (err) {
      const oauthError = toOAuthError(err, source);
      if (answeredByHost(res)) return;
      // Written as the key set is, not with res.json: that applies the host app's `json spaces` and `json replacer`
      // (a replacer that drops `error` made the body `{}`) and adds an ETag. With its description, as every other JSON
      // refusal of the router's (RFC 6749 §5.2).
      const body = Buffer.from(JSON.stringify(toErrorBody(oauthError)), 'utf8');
      res.statusCode = oauthError.status;
      res.setHeader('Content-Type', 'application/json;charset=UTF-8');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Length', body.length);
      res.end(body);
    }
  };
}
