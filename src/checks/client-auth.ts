// Client authentication at the token endpoint: HTTP Basic only (SPEC §5.1, RFC 6749 §2.3.1).
import type { OAuthClient, Store } from '../stores/contract.js';
import { isStoreId } from '../stores/store-policy.js';
import type { FormParams } from '../http/read-form.js';
import { InvalidClientError, InvalidRequestError } from '../errors.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { constantEquals } from '../crypto/constant-equals.js';

/** Credentials taken from an `Authorization: Basic` header. */
export interface BasicCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

// Compared against when the client_id is unknown, so that unknown and known ids take the same time.
const DUMMY_HASH = hashSecret('express-oauth-router: no such client');

/**
 * Parses `Authorization: Basic base64(urlencode(client_id):urlencode(client_secret))`.
 * @returns `null` when the header is absent.
 * @throws InvalidClientError when the header is present but not valid Basic credentials.
 * @see RFC 6749 §2.3.1 (form-encoding of id and secret before Base64), RFC 7617 §2.
 */
export function parseBasicCredentials(header: string | undefined): BasicCredentials | null {
  if (header === undefined) return null;
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) throw new InvalidClientError('the Authorization header must use the Basic scheme');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new InvalidClientError('malformed Basic credentials');
  try {
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    if (clientSecret.length === 0) throw new InvalidClientError('malformed Basic credentials');
    return { clientId, clientSecret };
  } catch (err) {
    if (err instanceof InvalidClientError) throw err;
    throw new InvalidClientError('malformed Basic credentials');
  }
}

/**
 * Authenticates the client of a token, revocation or introspection request.
 * - `Authorization: Basic` is required (SPEC §5.1); a client_secret in the body is refused
 *   (RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request").
 * - A body `client_id` (SPEC §4.3–4.5) must equal the Basic one; generic clients may leave it out.
 * - Unknown id and wrong secret give the same answer, in the same time.
 * @throws InvalidClientError (401) or InvalidRequestError.
 * @see RFC 6749 §2.3.1, §3.2.1, §5.2.
 */
export async function authenticateClient(
  store: Store,
  authorization: string | undefined,
  params: FormParams,
): Promise<OAuthClient> {
  if (params.has('client_secret')) {
    throw new InvalidRequestError('client_secret must be sent only in the Authorization header');
  }
  const credentials = parseBasicCredentials(authorization);
  if (!credentials) throw new InvalidClientError('client authentication required (HTTP Basic)');
  const bodyClientId = params.get('client_id');
  if (bodyClientId !== undefined && bodyClientId !== credentials.clientId) {
    throw new InvalidRequestError('client_id does not match the authenticated client');
  }
  // An id no store could hold (a NUL byte, a megabyte) never reaches the store; the answer is the same.
  const client = isStoreId(credentials.clientId) ? await store.clients.findClient(credentials.clientId) : null;
  const presented = hashSecret(credentials.clientSecret);
  const matches = constantEquals(presented, client ? client.clientSecretHash : DUMMY_HASH);
  if (!client || !matches || client.disabled) throw new InvalidClientError();
  return client;
}
