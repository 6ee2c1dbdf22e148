// Redis key layout and record encoding: JSON values with dates as epoch milliseconds.
import type { AuthorizationCodeRecord, ConsentRecord, OAuthClient, TokenRecord } from '../contract.js';

/**
 * Every key of one store, under its prefix. Ids that share a key with another id are URI-encoded, so
 * `("a:b", "c")` and `("a", "b:c")` never meet; hashes are base64url and need no encoding.
 */
export interface RedisKeys {
  client(clientId: string): string;
  /** Sorted set of client ids scored by createdAt. */
  readonly clientList: string;
  code(codeHash: string): string;
  accessToken(tokenHash: string): string;
  refreshToken(tokenHash: string): string;
  /** Sorted set of token keys of a grant, scored by expiry. */
  grantIndex(grantId: string): string;
  revokedGrant(grantId: string): string;
  clientIndex(clientId: string): string;
  userIndex(clientId: string, userId: string): string;
  consent(userId: string, clientId: string): string;
  /** Sorted set of client ids a user consented to, scored by grantedAt. */
  consentList(userId: string): string;
}

/** Builds the key layout for a prefix (default `oauth:`). */
export function createRedisKeys(prefix: string): RedisKeys {
  const e = encodeURIComponent;
  return {
    client: (id) => `${prefix}client:${e(id)}`,
    clientList: `${prefix}clients`,
    code: (hash) => `${prefix}code:${hash}`,
    accessToken: (hash) => `${prefix}at:${hash}`,
    refreshToken: (hash) => `${prefix}rt:${hash}`,
    grantIndex: (id) => `${prefix}grant:${e(id)}`,
    revokedGrant: (id) => `${prefix}revoked:${e(id)}`,
    clientIndex: (id) => `${prefix}ctok:${e(id)}`,
    userIndex: (clientId, userId) => `${prefix}utok:${e(clientId)}:${e(userId)}`,
    consent: (userId, clientId) => `${prefix}consent:${e(userId)}:${e(clientId)}`,
    consentList: (userId) => `${prefix}consents:${e(userId)}`,
  };
}

type Stored<T, D extends keyof T> = Omit<T, D> & { [K in D]: number };

/** OAuthClient → JSON, dates as epoch ms (the hash is stored, never the secret: RFC 6749 §2.3.1). */
export function encodeClient(c: OAuthClient): string {
  const stored: Stored<OAuthClient, 'credentialsIssuedAt' | 'createdAt'> = {
    ...c,
    credentialsIssuedAt: c.credentialsIssuedAt.getTime(),
    createdAt: c.createdAt.getTime(),
  };
  return JSON.stringify(stored);
}

/** JSON → OAuthClient, epoch ms back to `Date`. */
export function decodeClient(json: string): OAuthClient {
  const s = JSON.parse(json) as Stored<OAuthClient, 'credentialsIssuedAt' | 'createdAt'>;
  return { ...s, credentialsIssuedAt: new Date(s.credentialsIssuedAt), createdAt: new Date(s.createdAt) };
}

/** Authorization code record → JSON, expiresAt as epoch ms (RFC 6749 §4.1.2). */
export function encodeCode(r: AuthorizationCodeRecord): string {
  const stored: Stored<AuthorizationCodeRecord, 'expiresAt'> = { ...r, expiresAt: r.expiresAt.getTime() };
  return JSON.stringify(stored);
}

/** JSON → authorization code record, expiresAt back to `Date`. */
export function decodeCode(json: string): AuthorizationCodeRecord {
  const s = JSON.parse(json) as Stored<AuthorizationCodeRecord, 'expiresAt'>;
  return { ...s, expiresAt: new Date(s.expiresAt) };
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
