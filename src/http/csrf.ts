// Synchronizer-token CSRF protection for the forms of a signed-in user (consent, withdraw, sign-out).
import type { Request } from 'express';
import { createRandomToken } from '../crypto/random-token.js';
import { constantEquals } from '../crypto/constant-equals.js';
import { oauthSession, readOAuthSession } from './oauth-session.js';

/**
 * The session's CSRF token, made on first use. One per session, so that forms of several tabs stay valid; a
 * new one at every sign-in (startSignedInSession, bindSessionToUser). The login form, shown before any
 * session exists, uses the login cookie instead (login-csrf.ts).
 * @see RFC 6749 §10.12, RFC 6819 §4.4.1.4 (login and consent forms must not be forgeable).
 */
export function csrfTokenFor(req: Request): string {
  const data = oauthSession(req);
  data.csrf ??= createRandomToken();
  return data.csrf;
}

/** True when the submitted token matches the session's, compared in constant time. */
export function isValidCsrfToken(req: Request, submitted: unknown): boolean {
  const expected = readOAuthSession(req)?.csrf;
  return typeof submitted === 'string' && expected !== undefined && constantEquals(submitted, expected);
}
