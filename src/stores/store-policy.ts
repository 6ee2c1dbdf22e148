// Store policy shared by every store and pinned by the conformance suite: retention, order, valid ids.
import type { ClientChanges, ConsentRecord, OAuthClient, SigningKeyRecord, TokenRecord } from './contract.js';

/**
 * The numbers every store honours alike.
 * @see RFC 6749 §4.1.2 (codes live at most 10 minutes), RFC 7009 §2.1 (revocation takes effect).
 */
export const STORE_POLICY = {
  /**
   * How long a revocation is remembered (revoked grants, and the moment of each `revokeClientTokens`), so
   * that `saveTokens` refuses what it overtook. It must outlive every code (at most 10 minutes) and every
   * token request still under way; a day leaves a wide margin and stays small (one row per revocation).
   */
  revocationRetentionMs: 24 * 60 * 60 * 1000,
  /** The longest id a store must keep: client ids, user ids, grant ids and kids. */
  maxIdLength: 255,
  /**
   * How far `Store.backendTime` (the tokens server's clock) may be from the clock of a process that records
   * revocation moments on it, beyond the read's round trip: `oauth-admin` refuses to change anything past it.
   * NTP keeps clocks milliseconds apart; a moment recorded 1 s ahead refuses an integration's new tokens for 1 s.
   */
  maxClockSkewMs: 1000,
} as const;

/**
 * `saveTokens` saves an access token and, optionally, a refresh token of the same grant: one grant, one
 * integration, one user. A pair that is not is the caller's bug; every built-in store rejects it alike,
 * before writing anything, and so judges the pair's tombstones once.
 * @throws TypeError when the refresh token's grant, integration or user differs from the access token's.
 * @see src/stores/contract.ts TokenStore.saveTokens
 */
export function checkTokenPair(access: TokenRecord, refresh: TokenRecord | null): void {
  if (refresh && (refresh.grantId !== access.grantId || refresh.clientId !== access.clientId || refresh.userId !== access.userId)) {
    throw new TypeError('saveTokens: the access and refresh token must share their grant, integration and user');
  }
}

/**
 * Orders two ids by code point, which is the order of their UTF-8 bytes: SQLite's BINARY, PostgreSQL's `COLLATE "C"`
 * and MariaDB's `utf8mb4_nopad_bin` order, so every store lists alike (`'B' < 'a'`, and `'\uFF21' < '\u{1F600}'`).
 * JavaScript's `<` compares UTF-16 code units, which put a character past U+FFFF (a surrogate pair, D800–DFFF) before
 * one of U+E000–U+FFFF: the memory and Redis stores listed such ids in another order than SQLite and PostgreSQL. The
 * first differing code units decide; only when both are at or above D800 are they moved so that surrogates come last.
 */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x += x >= 0xe000 ? -0x800 : 0x2000;
      y += y >= 0xe000 ? -0x800 : 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** `listClients` order: oldest `createdAt` first, then `clientId` (binary). */
export function compareClients(a: OAuthClient, b: OAuthClient): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || compareIds(a.clientId, b.clientId);
}

/** `listConsents` order: oldest `grantedAt` first, then `clientId` (binary). */
export function compareConsents(a: ConsentRecord, b: ConsentRecord): number {
  return a.grantedAt.getTime() - b.grantedAt.getTime() || compareIds(a.clientId, b.clientId);
}

/** `listSigningKeys` order: oldest `createdAt` first, then `kid` (binary); the last one signs once it has been published. */
export function compareSigningKeys(a: SigningKeyRecord, b: SigningKeyRecord): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || compareIds(a.kid, b.kid);
}

// C0 and C1 controls, NUL included: a store may reject them (PostgreSQL refuses NUL in text). And a lone surrogate,
// which is no character: UTF-8 cannot encode it, so SQLite kept U+FFFD in its place and PostgreSQL and Redis merged
// 'x\uD800' with 'x\uFFFD' (two ids, one record), and no order of code points places it.
const UNSTORABLE = /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a value is an id every store must accept and keep apart from every other: a string of 1 to
 * `maxIdLength` characters without control characters or lone surrogates. Case and spaces are significant (`'abc'`,
 * `'ABC'` and `'abc '` are three ids). The router checks client ids from requests with it before any store
 * sees them, so a store never has to cope with a NUL byte or a megabyte id.
 * @see RFC 6749 §2.2 (client identifier), Appendix A.1 (client_id is VSCHAR).
 */
export function isStoreId(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= STORE_POLICY.maxIdLength && !UNSTORABLE.test(value);
}

/** The fields `updateClient` may change: every field of an integration but its id and its dates. */
export const CLIENT_CHANGE_FIELDS: readonly (keyof ClientChanges)[] = [
  'clientSecretHash', 'name', 'redirectUris', 'allowedScopes', 'requirePkce', 'disabled', 'tokenEndpointAuthMethod',
  'previousClientSecretHash', 'previousClientSecretExpiresAt',
];

/** The fields of `changes` that are set, in `CLIENT_CHANGE_FIELDS` order: what a store writes. */
export function definedClientChanges(changes: ClientChanges): ClientChanges {
  const defined: Record<string, unknown> = {};
  for (const field of CLIENT_CHANGE_FIELDS) if (changes[field] !== undefined) defined[field] = changes[field];
  return defined as ClientChanges;
}

/**
 * What `ClientStore.disableClient` writes: the flag, and no previous secret of a planned rotation, so that `enable`
 * brings back only the current one (a disable is often the answer to a leak). @see RFC 6819 §5.2.3.7.
 */
export const DISABLE_CLIENT_CHANGES: ClientChanges = Object.freeze({
  disabled: true, previousClientSecretHash: null, previousClientSecretExpiresAt: null,
});

/** What `ClientStore.enableClient` writes: the flag alone, so a concurrent secret rotation is kept. @see RFC 6749 §2.3.1. */
export const ENABLE_CLIENT_CHANGES: ClientChanges = Object.freeze({ disabled: false });

/**
 * An integration with `changes` applied, for stores that keep whole records (a map, a document): the fields
 * given replace the record's, and `null` removes `tokenEndpointAuthMethod` (or the previous secret), so that absence stays
 * absence. Apply it inside the store's atomic step, to the record as it is there, never to an earlier read.
 * @see RFC 7591 §2 (`token_endpoint_auth_method`).
 */
export function applyClientChanges(client: OAuthClient, changes: ClientChanges): OAuthClient {
  const { tokenEndpointAuthMethod, previousClientSecretHash, previousClientSecretExpiresAt, ...rest } = {
    ...client,
    ...definedClientChanges(changes),
  };
  return {
    ...rest,
    ...(tokenEndpointAuthMethod == null ? {} : { tokenEndpointAuthMethod }),
    ...(previousClientSecretHash == null || previousClientSecretExpiresAt == null
      ? {}
      : { previousClientSecretHash, previousClientSecretExpiresAt }),
  };
}
