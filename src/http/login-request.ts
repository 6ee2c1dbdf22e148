// The login form's reference to the authorization request it resumes: carried by the form, not the session.
import { resumeQuery } from './resume-query.js';

// A resume query is bounded by its parameters' limits (a state of 2,048 characters once encoded, a registered
// redirect_uri…) and by `fitsLoginForm`, which the authorization endpoint checks: anything longer was not made here.
// With the other fields of the login form it stays within PAGE_FORM_BODY_LIMIT.
const MAX_ENCODED_LENGTH = 12_000;

/**
 * Whether a resume query, encoded as the login form's `request_id`, is one the form may carry back. The
 * authorization endpoint refuses a longer request (`invalid_request`) instead of showing a login page whose
 * form would then be refused.
 */
export function fitsLoginForm(query: string): boolean {
  return Math.ceil((Buffer.byteLength(query, 'utf8') * 4) / 3) <= MAX_ENCODED_LENGTH;
}

/**
 * Encodes the validated request (its resume query) for the login form's hidden `request_id`. A signed-out
 * browser thus needs no server-side session: the request travels in the form and is validated again, in
 * full, when the form comes back and once more at the authorization endpoint after the sign-in. Nothing in
 * it needs to be secret or signed: it says only which authorization request to open after signing in, which
 * anybody can open with a link anyway.
 * @see RFC 6749 §4.1.1, §10.12; RFC 6819 §4.4.1.4.
 */
export function encodeLoginRequest(query: string): string {
  return Buffer.from(query, 'utf8').toString('base64url');
}

/** The authorization request of a login form's `request_id`, or null when it cannot be one. */
export function decodeLoginRequest(value: unknown): URLSearchParams | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ENCODED_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) return null;
  const query = new URLSearchParams(Buffer.from(value, 'base64url').toString('utf8'));
  // Only what resumeQuery would have kept: the same request, whoever encoded it.
  return new URLSearchParams(resumeQuery(query));
}
