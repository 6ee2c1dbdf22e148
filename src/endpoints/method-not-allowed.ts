// Answers a wrong HTTP method on a POST-only endpoint with 405 and an OAuth error body.
import type { Request, Response } from 'express';
import { sendNoStoreJson } from '../http/json-response.js';
import { oauthErrorBody } from '../errors.js';

/**
 * @see RFC 6749 §3.2 ("The client MUST use the HTTP POST method when making access token requests"),
 * RFC 9110 §15.5.6 (405 carries Allow).
 */
export function methodNotAllowed(_req: Request, res: Response): void {
  // The method is not named back: it is request input (RFC 6749 §5.2 descriptions never echo it).
  sendNoStoreJson(res, 405, oauthErrorBody('invalid_request', 'this endpoint accepts only POST'), [['Allow', 'POST']]);
}
