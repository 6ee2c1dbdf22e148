// Answers a wrong HTTP method on a POST-only endpoint with 405 and an OAuth error body.
import type { Request, Response } from 'express';
import { sendNoStoreJson } from '../http/json-response.js';

/**
 * @see RFC 6749 §3.2 ("The client MUST use the HTTP POST method when making access token requests"),
 * RFC 9110 §15.5.6 (405 carries Allow).
 */
export function methodNotAllowed(req: Request, res: Response): void {
  sendNoStoreJson(res, 405, { error: 'invalid_request', error_description: `${req.method} is not allowed; use POST` }, [['Allow', 'POST']]);
}
