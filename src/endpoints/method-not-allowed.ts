// Answers a wrong HTTP method on a JSON endpoint (POST-only, or a GET document) with 405 and an OAuth error body.
import type { Request, Response } from 'express';
import { sendHostRouteJson, sendNoStoreJson } from '../http/json-response.js';
import { oauthErrorBody } from '../errors.js';

/**
 * @see RFC 6749 §3.2 ("The client MUST use the HTTP POST method when making access token requests"),
 * RFC 9110 §15.5.6 (405 carries Allow).
 */
export function methodNotAllowed(_req: Request, res: Response): void {
  // The method is not named back: it is request input (RFC 6749 §5.2 descriptions never echo it).
  sendNoStoreJson(res, 405, oauthErrorBody('invalid_request', 'this endpoint accepts only POST'), [['Allow', 'POST']]);
}

/**
 * The same for the documents read with GET (the metadata, the JWKS), whose addresses otherwise fell through to the
 * host's 404 for a PUT. Their answers are public, not the token endpoint's, so the refusal takes the metadata's own
 * error headers (`no-store`, JSON, nosniff) rather than SPEC §4.2's set. OPTIONS too, as at the token endpoint:
 * neither document answers a CORS preflight (it needs none: a plain GET is a simple request).
 * @see RFC 8414 §3.1, RFC 7517 §5, RFC 9110 §15.5.6 (405 carries Allow), §9.3.2 (HEAD is GET without the body).
 */
export function documentMethodNotAllowed(_req: Request, res: Response): void {
  sendHostRouteJson(res, 405, oauthErrorBody('invalid_request', 'this endpoint accepts only GET and HEAD'), [['Allow', 'GET, HEAD']]);
}
