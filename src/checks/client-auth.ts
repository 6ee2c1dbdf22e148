// Client authentication at the token, revocation and introspection endpoints: client_secret_basic and client_secret_post (RFC 6749 §2.3.1).
import { isUtf8 } from 'node:buffer';
import type { OAuthClient, Store, TokenEndpointAuthMethod } from '../stores/contract.js';
import { isStoreId } from '../stores/store-policy.js';
import type { FormParams } from '../http/read-form.js';
import { InvalidClientError, InvalidRequestError } from '../errors.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { isKnownOrPending, isSlowSecretHash, verifyClientSecret } from '../crypto/verify-client-secret.js';
import { constantEquals } from '../crypto/constant-equals.js';
import { BasicReadingMemory } from './basic-reading-memory.js';

/** Credentials taken from an `Authorization: Basic` header or from the form. */
export interface BasicCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  /**
   * A Basic header's other reading, when it has one: the id and secret as sent, not form-decoded (SPEC §4.2: "the
   * Base64 encoding of client_id:client_secret"), where a `%` or `+` makes the two readings differ.
   */
  readonly literal?: BasicCredentials;
}

/** The credentials a request presented, and how. */
export interface PresentedCredentials extends BasicCredentials {
  readonly method: TokenEndpointAuthMethod;
}

/** What form-decoding changes: without either, the RFC's reading and SPEC's are the same string. */
const FORM_ENCODED = /[%+]/;

const MALFORMED_BASIC = 'malformed Basic credentials: expected the Base64 of client_id:client_secret';

// Compared against when the client_id is unknown, so that unknown and known ids take the same work here (the store's
// lookup still costs a found record more than a miss: the README's "How imported secrets are stored and checked").
const DUMMY_HASH = hashSecret('express-oauth-router: no such client');

/**
 * Parses `Authorization: Basic base64(urlencode(client_id):urlencode(client_secret))`. RFC 6749 §2.3.1 form-encodes
 * the id and secret before Base64; SPEC §4.2 says only "the Base64 encoding of client_id:client_secret", and curl
 * `-u`, requests' `HTTPBasicAuth` and Authlib send them as they are. The two readings differ only where the
 * credentials hold `%` or `+`: the form-decoded one is then the answer and the literal one its `literal`, tried
 * when the first does not authenticate; a literal `%` that is no escape (`%zz`) leaves the literal reading alone.
 * Octets that are not UTF-8 are read as ISO-8859-1, the charset of the clients that send non-ASCII unencoded.
 * @returns `null` when the header is absent.
 * @throws InvalidClientError when the header is present but not valid Basic credentials.
 * @see RFC 6749 §2.3.1 (form-encoding of id and secret before Base64), RFC 7617 §2, §2.1 (charset), SPEC §4.2, §5.1.
 */
export function parseBasicCredentials(header: string | undefined): BasicCredentials | null {
  if (header === undefined) return null;
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) {
    const described = /^Basic(?: |$)/i.test(header) ? MALFORMED_BASIC : 'the Authorization header must use the Basic scheme';
    throw new InvalidClientError(described, 'malformed_credentials');
  }
  const encoded = match[1]!;
  // RFC 7617 §2 / RFC 4648 §4: padding only up to a whole quantum, and no length Base64 cannot have. Node's decoder
  // would skip what does not fit, so a credential other than the one sent could be read.
  if (encoded.length % 4 === 1 || (encoded.endsWith('=') && encoded.length % 4 !== 0)) {
    throw new InvalidClientError(MALFORMED_BASIC, 'malformed_credentials');
  }
  const bytes = Buffer.from(encoded, 'base64');
  // RFC 7617 §2.1 leaves the charset to the server unless it asks for UTF-8, and the clients that send the id and
  // secret as they are (requests' HTTPBasicAuth, Authlib, @badgateway's interop method, browsers' btoa) encode them
  // as ISO-8859-1. Octets that are not UTF-8 have no UTF-8 reading, so their ISO-8859-1 one, an octet per
  // character and never U+FFFD, is the only reading: it names exactly what was sent.
  const decoded = bytes.toString(isUtf8(bytes) ? 'utf8' : 'latin1');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) throw new InvalidClientError('malformed Basic credentials', 'malformed_credentials');
  const literal: BasicCredentials = { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
  if (!FORM_ENCODED.test(decoded)) return literal;
  let clientId: string;
  let clientSecret: string;
  try {
    clientId = decodeURIComponent(literal.clientId.replace(/\+/g, ' '));
    clientSecret = decodeURIComponent(literal.clientSecret.replace(/\+/g, ' '));
  } catch {
    return literal;
  }
  return { clientId, clientSecret, literal };
}

/**
 * Reads the one set of credentials a request presents, before any store is asked.
 * - An `Authorization` header together with a form `client_secret` is two methods: 400 `invalid_request`
 *   (RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request"; §5.2
 *   lists "includes multiple credentials" under invalid_request). SPEC's form, Basic plus a body
 *   `client_id`, is one method: the body `client_id` must then equal the Basic one (DESIGN §5).
 * - A form `client_secret` without `client_id` is 400 `invalid_request`: §2.3.1 makes `client_id`
 *   REQUIRED with it, and the request is malformed whoever sent it (it names no client, so it reveals none).
 * - No credentials at all, or a method `allowed` does not list: 401 `invalid_client` ("no client
 *   authentication included, or unsupported authentication method", §5.2).
 * @throws InvalidRequestError, InvalidClientError.
 * @see RFC 6749 §2.3, §2.3.1, §5.2.
 */
export function readClientCredentials(
  authorization: string | undefined,
  params: FormParams,
  allowed: readonly TokenEndpointAuthMethod[],
): PresentedCredentials {
  const bodyClientId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (authorization !== undefined && bodySecret !== undefined) {
    throw new InvalidRequestError('use one client authentication method: the Authorization header or client_secret in the body, not both');
  }
  let presented: PresentedCredentials;
  if (authorization !== undefined) {
    const basic = parseBasicCredentials(authorization)!;
    const { literal } = basic;
    if (bodyClientId === undefined || bodyClientId === basic.clientId) {
      // A body client_id names the integration: the literal reading is tried only if it names the same one.
      const alsoLiteral = literal !== undefined && (bodyClientId === undefined || literal.clientId === bodyClientId);
      presented = alsoLiteral
        ? { clientId: basic.clientId, clientSecret: basic.clientSecret, literal, method: 'client_secret_basic' }
        : { clientId: basic.clientId, clientSecret: basic.clientSecret, method: 'client_secret_basic' };
    } else if (literal !== undefined && bodyClientId === literal.clientId) {
      presented = { clientId: literal.clientId, clientSecret: literal.clientSecret, method: 'client_secret_basic' };
    } else {
      throw new InvalidRequestError('client_id does not match the authenticated client');
    }
  } else if (bodySecret !== undefined) {
    if (bodyClientId === undefined) throw new InvalidRequestError('client_secret in the body needs client_id next to it');
    presented = { clientId: bodyClientId, clientSecret: bodySecret, method: 'client_secret_post' };
  } else {
    throw new InvalidClientError(`client authentication required (${allowed.join(' or ')})`, 'no_credentials');
  }
  if (!allowed.includes(presented.method)) {
    throw new InvalidClientError(`this server does not accept ${presented.method}; use ${allowed.join(' or ')}`, 'method_not_allowed');
  }
  return presented;
}

/**
 * Whether `presented` is the integration's secret, or the secret a planned rotation replaced while its grace
 * period runs (`previousClientSecretExpiresAt` in the future). Both comparisons always run, against the dummy
 * hash when there is no client or no live previous secret, so unknown, known, wrong and previous take the
 * same work. When both stored hashes are plain SHA-256 (every generated secret, and the dummy), the presented
 * secret is hashed once and compared with each, and the answer is synchronous: one SHA-256 and no promise
 * instead of two of each on every token request.
 * @see RFC 6749 §2.3.1, §10.1; RFC 6819 §5.2.3.7 (secret rotation).
 */
/**
 * Runs a slow secret check (scrypt, bcrypt) of the integration `clientId` when its turn comes: the
 * client-authentication limit's `slowCheck`. `final`: a mismatch is the request's verdict (not a copy's, which a
 * lookup may overturn), so the limit counts it before the next check starts.
 */
export type SlowCheckGate = (clientId: string, final: boolean, check: () => Promise<boolean>) => Promise<boolean>;

/** The two hashes a presented secret is compared with: the current one and, while a grace period runs, the previous
 * one; the dummy hash stands in for either that is absent. */
function comparedHashes(client: OAuthClient | null): { currentHash: string; previousHash: string; inGrace: boolean } {
  const expiresAt = client?.previousClientSecretExpiresAt;
  const previous = client?.previousClientSecretHash;
  const inGrace = previous != null && expiresAt instanceof Date && expiresAt.getTime() > Date.now();
  return { currentHash: client ? client.clientSecretHash : DUMMY_HASH, previousHash: inGrace ? previous : DUMMY_HASH, inGrace };
}

function verifiesCurrentOrPrevious(
  client: OAuthClient | null, presented: string, gate?: SlowCheckGate, final = true,
): boolean | Promise<boolean> {
  const { currentHash, previousHash, inGrace } = comparedHashes(client);
  // `&& inGrace`: the dummy hash matches its own phrase, which must never authenticate anyone.
  if (!isSlowSecretHash(currentHash) && !isSlowSecretHash(previousHash)) {
    const digest = hashSecret(presented);
    const current = constantEquals(digest, currentHash);
    const old = constantEquals(digest, previousHash);
    return current || (old && inGrace);
  }
  const check = () => Promise.all([verifyClientSecret(currentHash, presented), verifyClientSecret(previousHash, presented)])
    .then(([current, old]) => current || (old && inGrace));
  // A secret that matched before, or whose check is under way, costs no new scrypt: it need not wait its turn.
  if (!gate || !client || (isSlowSecretHash(currentHash) && isKnownOrPending(currentHash, presented))) return check();
  return gate(client.clientId, final, check);
}

/**
 * The secrets `verifiesCurrentOrPrevious` compares with when one of them is slow (scrypt, bcrypt), as one string;
 * `null` when both are fast. Two records with the same key give the same verdict for the same presented secret.
 */
function slowSecretsOf(client: OAuthClient): string | null {
  const { currentHash, previousHash } = comparedHashes(client);
  if (!isSlowSecretHash(currentHash) && !isSlowSecretHash(previousHash)) return null;
  return `${currentHash}\n${previousHash}`;
}

/** An authenticated integration, and the revision of the store's copy it was read from, when it was. */
export interface AuthenticatedClient {
  readonly client: OAuthClient;
  /** Given only for a copy (`Store.clientCopies`): its tokens' `SaveTokensOptions.clientRevision`. */
  readonly revision?: string;
}

/** Why a record does not authenticate `method`, or null when it does (`verified`: the secret checked out). */
function refusal(client: OAuthClient | null, verified: boolean, method: TokenEndpointAuthMethod): InvalidClientError | null {
  if (!client || !verified || client.disabled) {
    return new InvalidClientError(undefined, !client ? 'unknown_client' : !verified ? 'wrong_secret' : 'disabled');
  }
  // `!= null`: a store may hand back null for "no restriction" even though the contract asks for absence.
  const required = client.tokenEndpointAuthMethod;
  if (required != null && required !== method) {
    return new InvalidClientError(`this integration must authenticate with ${required}`, 'method_not_allowed');
  }
  return null;
}

/**
 * Authenticates the client of a token, revocation or introspection request with `client_secret_basic` or
 * `client_secret_post`, whichever of `allowed` it used (see `readClientCredentials`).
 * - Unknown id, wrong secret and disabled integration give the same answer, after the same work here, whatever
 *   the method: the presented secret is always hashed and compared, against a dummy hash for an unknown id (the
 *   store's lookup, a record found or not, still differs by some microseconds: client ids are not secrets).
 * - An integration restricted to another method (`tokenEndpointAuthMethod`) is refused with
 *   `invalid_client` too, and told which method to use only once its secret checked out, so that a guess
 *   learns nothing about the integration.
 * - With `copies` (the token endpoint's grants) and a store that keeps
 *   them, a copy that authenticates the request is used without a lookup; anything else (no copy, a copy that
 *   refuses) is looked up and judged afresh, so a copy never refuses anyone: a re-enabled integration or a
 *   new secret counts at once. The presented secret is compared once against the copy, or against the dummy
 *   hash when there is none, so every failure costs one comparison more and one lookup, whoever is known;
 *   but a slow (scrypt, bcrypt) check is not run again when the looked-up record has the copy's secrets: its
 *   verdict is known, and a burst of wrong secrets must not cost two slow checks each.
 * - With `gate` (the client-authentication limit), a slow check that would start a new scrypt or bcrypt waits
 *   its turn there, so a burst of wrong secrets cannot run more checks than the limit allows.
 * - A Basic header whose credentials hold `%` or `+` is read form-decoded first (RFC 6749 §2.3.1) and, when that
 *   reading names no integration or not its secret, as sent (SPEC §4.2): an imported secret such as `a+b%2F` works
 *   for a partner whose client sends it as it is. Which reading is tried depends only on what was sent.
 * @throws InvalidClientError (401) or InvalidRequestError.
 * @see RFC 6749 §2.3.1, §3.2.1, §5.2; RFC 7591 §2 (`token_endpoint_auth_method`); SPEC §2, §5.1.
 */
export async function authenticateClient(
  store: Store,
  authorization: string | undefined,
  params: FormParams,
  allowed: readonly TokenEndpointAuthMethod[],
  copies = false,
  gate?: SlowCheckGate,
): Promise<AuthenticatedClient> {
  const presented = readClientCredentials(authorization, params, allowed);
  const { literal } = presented;
  if (literal === undefined) return authenticatePresented(store, presented, copies, gate, true);
  // SPEC §4.2's reading of a Basic header holding `%` or `+`, and RFC 6749 §2.3.1's: the one that authenticated this
  // id last time first (a secret imported as scrypt costs a check per mismatch, and a partner sends it one way), then
  // the other. The first one's slow-check mismatch is not the request's verdict (`final` false), so a partner is
  // never counted as failing by its own successes; the request's failure, if both fail, is counted once.
  const asSent: PresentedCredentials = { ...literal, method: presented.method };
  const [a, b] = READ_AS_SENT.readAsSent(presented.clientId) ? [asSent, presented] : [presented, asSent];
  let first: InvalidClientError;
  try {
    return remember(presented.clientId, a === asSent, await authenticatePresented(store, a, copies, gate, false));
  } catch (err) {
    // Told only once its secret checked out, so the second reading need not run for it.
    if (!(err instanceof InvalidClientError) || err.reason === 'method_not_allowed') throw err;
    first = err;
  }
  // Run for every other refusal, a disabled integration's included, so that which one it was takes the same work.
  try {
    return remember(presented.clientId, b === asSent, await authenticatePresented(store, b, copies, gate, true));
  } catch (err) {
    if (!(err instanceof InvalidClientError)) throw err;
    // The answer, and the id its event and the limit's count name: the reading whose id is an integration's.
    return Promise.reject(first.reason === 'unknown_client' && err.reason !== 'unknown_client'
      ? attributed(err, b.clientId)
      : attributed(first, a.clientId));
  }
}

/** Form-decoded client_ids whose header last authenticated as sent (SPEC §2): tried that way first. */
const READ_AS_SENT = new BasicReadingMemory();

/** Notes which reading of `clientId`'s header authenticated, and passes the result on. */
function remember(clientId: string, asSent: boolean, result: AuthenticatedClient): AuthenticatedClient {
  READ_AS_SENT.remember(clientId, asSent);
  return result;
}

/** `err`, naming the client_id of the reading that was refused (`InvalidClientError.presentedClientId`). */
function attributed(err: InvalidClientError, clientId: string): InvalidClientError {
  err.presentedClientId = clientId;
  return err;
}

/** `authenticateClient` for one reading of the credentials. */
async function authenticatePresented(
  store: Store, presented: PresentedCredentials, copies: boolean, gate: SlowCheckGate | undefined, final: boolean,
): Promise<AuthenticatedClient> {
  const { clientId, clientSecret, method } = presented;
  // An id no store could hold (a NUL byte, a megabyte) never reaches the store; the answer is the same.
  const storable = isStoreId(clientId);
  let copyVerdict: { readonly secrets: string; readonly matches: boolean } | null = null;
  if (copies && store.clientCopies) {
    const copy = storable ? store.clientCopies.find(clientId) : undefined;
    const checked = verifiesCurrentOrPrevious(copy?.client ?? null, clientSecret, gate, false);
    const matches = typeof checked === 'boolean' ? checked : await checked;
    if (copy && refusal(copy.client, matches, method) === null) return { client: copy.client, revision: copy.revision };
    const secrets = copy ? slowSecretsOf(copy.client) : null;
    if (secrets !== null) copyVerdict = { secrets, matches };
  }
  const client = storable ? await store.clients.findClient(clientId) : null;
  const checked = copyVerdict && client && slowSecretsOf(client) === copyVerdict.secrets
    ? copyVerdict.matches
    : verifiesCurrentOrPrevious(client, clientSecret, gate, final);
  const matches = typeof checked === 'boolean' ? checked : await checked;
  const refused = refusal(client, matches, method);
  if (refused) throw refused;
  return { client: client! };
}
