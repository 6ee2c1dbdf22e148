// Synchronizer-token CSRF protection for the login and consent forms.
import type { Request } from 'express';
import { createRandomToken } from '../crypto/random-token.js';
import { constantEquals } from '../crypto/constant-equals.js';
import { oauthSession } from './oauth-session.js';

/**
 * The session's CSRF token, made on first use. One per session: forms of several tabs stay valid.
 * @see RFC 6749 §10.12, RFC 6819 §4.4.1.4 (login and consent forms must not be forgeable).
 */
export function csrfTokenFor(req: Request): string {
  const data = oauthSession(req);
  data.csrf ??= createRandomToken();
  return data.csrf;
}

/** True when the submitted token matches the session's, compared in constant time. */
export function isValidCsrfToken(req: Request, submitted: unknown): boolean {
  const expected = oauthSession(req).csrf;
  return typeof submitted === 'string' && expected !== undefined && constantEquals(submitted, expected);
}
