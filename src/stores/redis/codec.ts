// Redis key layout and record encoding: JSON values with dates as epoch milliseconds.
import { hash } from 'node:crypto';
import type { AuthorizationCodeRecord, ClientChanges, ConsentRecord, OAuthClient, TokenRecord } from '../contract.js';

/**
 * Every key of one store, under its prefix. Ids that share a key with another id are encoded (`keyPart`), so
 * `("a:b", "c")` and `("a", "b:c")` never meet; hashes are base64url and need no encoding.
 *
 * Keys a script touches together are derivable from the ids it is given, and an encoded id never contains
 * `{` or `}`, so on a cluster (`createRedisKeys(prefix, true)`) only the tags this module adds count.
 */
export interface RedisKeys {
  /** Hash, one field per OAuthClient property (`CLIENT_FIELDS`), so `updateClient` can HSET single fields. */
  client(clientId: string): string;
  /** Sorted set of client ids scored by createdAt. */
  readonly clientList: string;
  code(codeHash: string): string;
  accessToken(tokenHash: string): string;
  refreshToken(tokenHash: string): string;
  /** Whether `key` (an index member) names a refresh token. */
  isRefreshToken(key: string): boolean;
  /** Sorted set of token keys of a grant, scored by expiry. */
  grantIndex(grantId: string): string;
  revokedGrant(grantId: string): string;
  /** Sorted set of the keys of an integration's tokens, scored by expiry. */
  clientIndex(clientId: string): string;
  /** Sorted set of the keys of one user's tokens at an integration, scored by expiry. */
  userIndex(clientId: string, userId: string): string;
  /** Epoch ms of the latest `revokeClientTokens(clientId)`. */
  clientRevokedAt(clientId: string): string;
  /** Epoch ms of the latest `revokeClientTokens(clientId, userId)`. */
  userRevokedAt(clientId: string, userId: string): string;
  /**
   * Where `revokeClientTokens` moves an index it drains (suffix of the index key, so same hash tag): the first of
   * `drainingSets(index)`, and the only one versions before 0.3.0 wrote.
   */
  draining(index: string): string;
  /**
   * The two draining sets an index may have at once: `draining(index)`, the one every version wrote, and a second,
   * which a revocation takes when an earlier one's set is still draining and neither is small enough to merge (see
   * START_REVOCATION). Lookups and token saves check both; each drains on its own.
   */
  drainingSets(index: string): readonly [string, string];
  /**
   * Sorted set of the draining sets a revocation registered and has not emptied, each scored by the moment its
   * drainer's lease runs out (see drain.ts).
   */
  readonly drains: string;
  /**
   * A string that exists while `drains` has a member: token lookups read it with the token (one MGET), and only
   * when it is there look the token up in the draining sets.
   */
  readonly drainMarker: string;
  consent(userId: string, clientId: string): string;
  /** Sorted set of client ids a user consented to, scored by grantedAt. */
  consentList(userId: string): string;
}

/** The characters `encodeURIComponent` leaves as they are (ECMA-262 §19.2.6.5, "uriUnreserved"), and only them. */
const UNRESERVED = /^[\w.!~*'()-]*$/;

/**
 * URI-encodes an id for a key. A lone UTF-16 surrogate (which `encodeURIComponent` refuses) is written as
 * `%uXXXX`: `u` is no hex digit, so that form never meets one `encodeURIComponent` produces. An id made only of
 * characters the encoding leaves alone is its own encoding, and every hash and minted id is (base64url): the
 * test costs a tenth of the runtime call, which a code exchange made about ten times.
 */
export function keyPart(id: string): string {
  if (UNRESERVED.test(id)) return id;
  try {
    return encodeURIComponent(id);
  } catch {
    return id.replace(/[^\w.!~*'()-]/gu, (ch) =>
      ch.length === 1 && ch >= '\ud800' && ch <= '\udfff'
        ? `%u${ch.charCodeAt(0).toString(16).toUpperCase()}`
        : encodeURIComponent(ch),
    );
  }
}

/**
 * Builds the key layout for a prefix (default `oauth:`). On a plain Redis the layout is the one every
 * earlier version wrote (so running deployments keep their data). With `cluster`, keys that a script
 * touches together carry one hash tag, so each script's keys share a slot (Redis Cluster refuses a script
 * whose keys do not), and the prefix goes inside the tag, so stores on several prefixes land on several
 * slots. The token family (tokens, grant and integration indexes, tombstones, revocation moments) is one
 * slot per prefix: saveTokens, revokeGrant and the revocation drain join keys found only by token hash with
 * keys found by grant and by integration, so no finer tag keeps each of them in one slot. Clients (the
 * record and the list) are one slot per prefix; consents one slot per user; codes, rate-limit counters and
 * the signing-key hash are single-key operations and carry no tag, so they spread over every master.
 * @see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags
 */
export function createRedisKeys(prefix: string, cluster = false): RedisKeys {
  const e = keyPart;
  const t = cluster ? `{${prefix}tokens}` : prefix;
  const c = cluster ? `{${prefix}clients}` : prefix;
  const u = (userId: string): string => (cluster ? `{${prefix}consents:${e(userId)}}` : prefix);
  return {
    client: (id) => `${c}client:${e(id)}`,
    clientList: `${c}clients`,
    code: (hash) => `${prefix}code:${hash}`,
    accessToken: (hash) => `${t}at:${hash}`,
    refreshToken: (hash) => `${t}rt:${hash}`,
    isRefreshToken: (key) => key.startsWith(`${t}rt:`),
    grantIndex: (id) => `${t}grant:${e(id)}`,
    revokedGrant: (id) => `${t}revoked:${e(id)}`,
    clientIndex: (id) => `${t}ctok:${e(id)}`,
    userIndex: (clientId, userId) => `${t}utok:${e(clientId)}:${e(userId)}`,
    // The `{id}` tag of the plain layout is kept there as written; in cluster mode the family tag comes first.
    clientRevokedAt: (id) => `${t}revoked-client:{${e(id)}}`,
    userRevokedAt: (clientId, userId) => `${t}revoked-user:{${e(clientId)}}:${e(userId)}`,
    draining: (index) => `${index}:draining`,
    drainingSets: (index) => [`${index}:draining`, `${index}:draining:1`],
    drains: `${t}drains`,
    drainMarker: `${t}drains-any`,
    consent: (userId, clientId) => cluster ? `${u(userId)}consent:${e(clientId)}` : `${prefix}consent:${e(userId)}:${e(clientId)}`,
    consentList: (userId) => cluster ? `${u(userId)}consents` : `${prefix}consents:${e(userId)}`,
  };
}

type Stored<T, D extends keyof T> = Omit<T, D> & { [K in D]: number };

/**
 * The fields of a client hash, in the order HMGET reads them: every OAuthClient property. The optional
 * `tokenEndpointAuthMethod` (and the previous secret's two fields) is a hash field only when set: a record
 * without it has no such field (as every record written before it existed), and `updateClient` with `null`
 * deletes it.
 */
export const CLIENT_FIELDS = [
  'clientId', 'clientSecretHash', 'name', 'flow', 'redirectUris', 'allowedScopes', 'requirePkce',
  'credentialsIssuedAt', 'createdAt', 'disabled', 'tokenEndpointAuthMethod',
  'previousClientSecretHash', 'previousClientSecretExpiresAt',
] as const satisfies readonly (keyof OAuthClient)[];

/** Fields a record may lack: a missing hash field reads as an absent property, never as `null`. */
const OPTIONAL_CLIENT_FIELDS = new Set<string>([
  'tokenEndpointAuthMethod', 'previousClientSecretHash', 'previousClientSecretExpiresAt',
]);

const CLIENT_DATES = new Set<string>(['credentialsIssuedAt', 'createdAt', 'previousClientSecretExpiresAt']);

/**
 * Client fields → flat `[field, json, …]` for HSET: each value JSON on its own (dates as epoch ms), so one
 * field can be replaced without touching the others. The hash is stored, never the secret (RFC 6749 §2.3.1).
 * A `null` change is written as the JSON `null`, which UPDATE_CLIENT turns into an HDEL.
 */
export function encodeClientFields(fields: Partial<OAuthClient> | ClientChanges): string[] {
  const flat: string[] = [];
  for (const [field, value] of Object.entries(fields) as [string, unknown][]) {
    if (value === undefined) continue;
    flat.push(field, JSON.stringify(value instanceof Date ? value.getTime() : value));
  }
  return flat;
}

/**
 * The revision of a client hash as HMGET of `CLIENT_FIELDS` read it: SHA-1 of each field's value prefixed by
 * its length in bytes (`-` for a missing field), computed alike by SAVE_TOKENS in Lua. Any write of another
 * value to any field, by any writer (another instance, a previous version, redis-cli), changes it; a field
 * set back to the same value does not, and then the record is what the copy holds.
 * @see RFC 6749 §2.3.1 (client authentication).
 */
export function clientRevisionOf(values: readonly (string | null)[]): string {
  const parts = values.map((value) => (value === null ? '-' : `${Buffer.byteLength(value)}:${value}`));
  // One-shot: this runs on every integration lookup, and a Hash object costs about three times as much.
  return hash('sha1', parts.join(''));
}

/** HMGET of `CLIENT_FIELDS` → OAuthClient, or `null` when the hash does not exist. */
export function decodeClientFields(values: readonly (string | null)[]): OAuthClient | null {
  if (values.every((v) => v === null)) return null;
  const record: Record<string, unknown> = {};
  CLIENT_FIELDS.forEach((field, i) => {
    const value: unknown = JSON.parse(values[i] ?? 'null');
    if (value === null && OPTIONAL_CLIENT_FIELDS.has(field)) return;
    record[field] = CLIENT_DATES.has(field) ? new Date(value as number) : value;
  });
  return record as unknown as OAuthClient;
}

/** A client as version 0.1 stored it, one JSON string: read as is, and converted to a hash on first update. */
export function decodeLegacyClient(json: string): OAuthClient {
  const s = JSON.parse(json) as Stored<OAuthClient, 'credentialsIssuedAt' | 'createdAt'>;
  return { ...s, credentialsIssuedAt: new Date(s.credentialsIssuedAt), createdAt: new Date(s.createdAt) };
}

/** How long a code lives at most (RFC 6749 §4.1.2): the conservative issuedAt of a code stored without one. */
const CODE_LIFETIME_MS = 10 * 60 * 1000;

/** Authorization code record → JSON, issuedAt and expiresAt as epoch ms (RFC 6749 §4.1.2). */
export function encodeCode(r: AuthorizationCodeRecord): string {
  const stored: Stored<AuthorizationCodeRecord, 'issuedAt' | 'expiresAt'> = {
    ...r,
    issuedAt: r.issuedAt.getTime(),
    expiresAt: r.expiresAt.getTime(),
  };
  return JSON.stringify(stored);
}

/**
 * JSON → authorization code record. A code saved by version 0.1 has no issuedAt: it reads as
 * `expiresAt − 10 minutes`, the earliest it can have been issued, so that a revocation after it voids it.
 */
export function decodeCode(json: string): AuthorizationCodeRecord {
  const s = JSON.parse(json) as Stored<AuthorizationCodeRecord, 'expiresAt'> & { issuedAt?: number };
  return { ...s, issuedAt: new Date(s.issuedAt ?? s.expiresAt - CODE_LIFETIME_MS), expiresAt: new Date(s.expiresAt) };
}

/** Token record → JSON, expiresAt as epoch ms. */
export function encodeToken(r: TokenRecord): string {
  const stored: Stored<TokenRecord, 'expiresAt'> = { ...r, expiresAt: r.expiresAt.getTime() };
  return JSON.stringify(stored);
}

/** `null` when absent or past its expiresAt: a key may outlive its expiry by a few ms before Redis evicts it. */
export function decodeLiveToken(json: string | null, now: number): TokenRecord | null {
  if (json === null) return null;
  const s = JSON.parse(json) as Stored<TokenRecord, 'expiresAt'>;
  return s.expiresAt > now ? { ...s, expiresAt: new Date(s.expiresAt) } : null;
}

/** The grant id of a stored token's JSON. */
export function grantIdOf(json: string): string {
  return (JSON.parse(json) as { grantId: string }).grantId;
}

/** Consent record → JSON, grantedAt as epoch ms. */
export function encodeConsent(r: ConsentRecord): string {
  const stored: Stored<ConsentRecord, 'grantedAt'> = { ...r, grantedAt: r.grantedAt.getTime() };
  return JSON.stringify(stored);
}

/** JSON → consent record, grantedAt back to `Date`. */
export function decodeConsent(json: string): ConsentRecord {
  const s = JSON.parse(json) as Stored<ConsentRecord, 'grantedAt'>;
  return { ...s, grantedAt: new Date(s.grantedAt) };
}
