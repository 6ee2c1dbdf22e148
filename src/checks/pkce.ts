// PKCE, S256 only (RFC 7636; RFC 9700 §2.1.1).
import { createHash } from 'node:crypto';
import { constantEquals } from '../crypto/constant-equals.js';
import { InvalidGrantError, InvalidRequestError } from '../errors.js';

// RFC 7636 §4.1/§4.2: 43–128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
// An S256 challenge is a base64url SHA-256: exactly 43 characters, the last of which holds the digest's final
// 4 bits and 2 zero bits (RFC 4648 §3.5), so only 16 of the 64 letters can end it. Any other last letter names
// no digest: no verifier could ever match it, and the code would be issued unredeemable.
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{42}[AEIMQUYcgkosw048]$/;

/**
 * Validates the PKCE parameters of an authorization request.
 * @returns the challenge to bind to the code, or `null` when none was sent and none is required.
 * @throws InvalidRequestError: challenge required but missing ("code challenge required", RFC 7636 §4.4.1),
 * a method other than S256 ("transform algorithm not supported"), or a malformed challenge.
 */
export function checkCodeChallenge(challenge: string | undefined, method: string | undefined, required: boolean): string | null {
  if (challenge === undefined) {
    if (method !== undefined) throw new InvalidRequestError('code_challenge_method without code_challenge');
    if (required) throw new InvalidRequestError('code challenge required');
    return null;
  }
  // RFC 7636 §4.3 defaults a missing method to "plain", which we refuse (RFC 9700 §2.1.1).
  if (method !== 'S256') throw new InvalidRequestError('transform algorithm not supported: code_challenge_method must be S256');
  if (!S256_CHALLENGE.test(challenge)) throw new InvalidRequestError('code_challenge is not a valid S256 challenge');
  return challenge;
}

/**
 * Checks the syntax of a code_verifier, before the code is looked at: one outside RFC 7636 §4.1
 * (`code-verifier = 43*128unreserved`) makes the request malformed, RFC 6749 §5.2 `invalid_request`. §4.6's
 * `invalid_grant` is for a verifier that does not match; a malformed one was compared with nothing, so the
 * code is not spent on it.
 * @throws InvalidRequestError for a malformed verifier.
 * @see RFC 7636 §4.1, RFC 6749 §5.2.
 */
export function checkCodeVerifierSyntax(verifier: string | undefined): void {
  if (verifier !== undefined && !VERIFIER.test(verifier)) {
    throw new InvalidRequestError('code_verifier is malformed: 43 to 128 characters of A-Z, a-z, 0-9 and -._~ (RFC 7636 section 4.1)');
  }
}

/**
 * Verifies a code_verifier against the challenge bound to the code (its syntax checked by `checkCodeVerifierSyntax`).
 * A verifier sent for a code issued without a challenge is refused too: that is how a PKCE downgrade shows.
 * @throws InvalidGrantError (RFC 7636 §4.6: "If the values are not equal, an error response indicating
 * 'invalid_grant' … MUST be returned").
 */
export function checkCodeVerifier(challenge: string | null, verifier: string | undefined): void {
  if (challenge === null) {
    if (verifier !== undefined) throw new InvalidGrantError('code_verifier sent but the authorization request had no code_challenge');
    return;
  }
  if (verifier === undefined) throw new InvalidGrantError('code_verifier required');
  const computed = createHash('sha256').update(verifier, 'ascii').digest('base64url');
  if (!constantEquals(computed, challenge)) throw new InvalidGrantError('code_verifier does not match the code_challenge');
}
