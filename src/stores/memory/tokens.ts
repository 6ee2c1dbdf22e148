// The memory store's tokens: every check-and-write in one synchronous block, revocations kept as tombstones.
import type { SaveTokensOptions, TokenRecord, TokenStore } from '../contract.js';
import { STORE_POLICY, checkTokenPair } from '../store-policy.js';
import { decode, encode, isLive, pairKey, type Ready, type Encoded } from './codec.js';
import { SWEEP_BATCH } from '../sweep-loop.js';

type TokenKind = 'access' | 'refresh';
interface StoredToken {
  readonly kind: TokenKind;
  readonly record: TokenRecord;
}
/** A revocation remembered: when it happened, and until when it is kept. */
interface Tombstone {
  readonly at: number;
  readonly until: number;
}

/** The token part and its sweep, which drops expired tokens and tombstones. */
export interface MemoryTokenStore {
  readonly tokens: Required<TokenStore>;
  /** Drops what expired at `now`, yielding after every `SWEEP_BATCH` entries looked at (sweep-loop.ts). */
  sweep(now: number): Generator<void, void, unknown>;
  /** Removes every token of a deleted integration, synchronously (its tombstone is the caller's). */
  dropClient(clientId: string): void;
  /** Changes with every revocation: the `RevocationFeed` mark of the memory store. */
  revocationCount(): number;
  /** Tokens, grant index entries and tombstones held, expired ones included until swept. */
  recordCount(): number;
}

/**
 * Tokens in Maps of stored copies. Every method does its checks and writes with no await in between, so a
 * `saveTokens` racing a revocation runs wholly before it (and is removed by it) or wholly after it (and is
 * refused by its tombstone): exact, with no timing involved.
 * @see RFC 6749 §4.1.2 (replay revokes the grant), RFC 7009 §2.1 (revocation).
 */
export function createMemoryTokenStore(ready: Ready): MemoryTokenStore {
  const tokens = new Map<string, Encoded>();
  /** grantId → token hashes, so that revoking a grant does not scan every token. */
  const tokensByGrant = new Map<string, Set<string>>();
  const revokedGrants = new Map<string, Tombstone>();
  /** clientId → the last revokeClientTokens(clientId). */
  const revokedClients = new Map<string, Tombstone>();
  /** pairKey(clientId, userId) → the last revokeClientTokens(clientId, userId). */
  const revokedUsers = new Map<string, Tombstone>();
  /** Bumped in the same synchronous block as every removal, so no cached token outlives it by a request. */
  let revocations = 0;

  function remember(map: Map<string, Tombstone>, key: string, now: number): void {
    const before = map.get(key);
    map.set(key, { at: Math.max(now, before?.at ?? 0), until: now + STORE_POLICY.revocationRetentionMs });
  }

  /** Whether a tombstone in `map` at `key` is live and (with `since`) recorded at or after `since`. */
  function revoked(map: Map<string, Tombstone>, key: string, now: number, since = -Infinity): boolean {
    const tombstone = map.get(key);
    return tombstone !== undefined && tombstone.until > now && tombstone.at >= since;
  }

  function put(kind: TokenKind, record: TokenRecord): void {
    tokens.set(record.tokenHash, encode({ kind, record } satisfies StoredToken));
    let hashes = tokensByGrant.get(record.grantId);
    if (!hashes) tokensByGrant.set(record.grantId, (hashes = new Set()));
    hashes.add(record.tokenHash);
  }

  function remove(tokenHash: string, grantId: string): void {
    tokens.delete(tokenHash);
    const hashes = tokensByGrant.get(grantId);
    hashes?.delete(tokenHash);
    if (hashes?.size === 0) tokensByGrant.delete(grantId);
  }

  function find(kind: TokenKind, tokenHash: string): TokenRecord | null {
    const json = tokens.get(tokenHash);
    if (json === undefined) return null;
    const stored = decode<StoredToken>(json);
    if (stored.kind !== kind) return null;
    if (!isLive(stored.record.expiresAt, Date.now())) {
      remove(tokenHash, stored.record.grantId);
      return null;
    }
    return stored.record;
  }

  function refused(record: TokenRecord, since: number, now: number): boolean {
    return revoked(revokedGrants, record.grantId, now)
      || revoked(revokedClients, record.clientId, now, since)
      || (record.userId !== null && revoked(revokedUsers, pairKey(record.clientId, record.userId), now, since));
  }

  return {
    tokens: {
      async saveTokens(access: TokenRecord, refresh: TokenRecord | null, options: SaveTokensOptions): Promise<boolean> {
        checkTokenPair(access, refresh);
        await ready();
        // The refresh token shares the access token's grant, integration and user: one judgement for both.
        if (refused(access, options.authorizedAt.getTime(), Date.now())) return false;
        put('access', access);
        if (refresh) put('refresh', refresh);
        return true;
      },
      async findAccessToken(tokenHash: string): Promise<TokenRecord | null> {
        await ready();
        return find('access', tokenHash);
      },
      async findRefreshToken(tokenHash: string): Promise<TokenRecord | null> {
        await ready();
        return find('refresh', tokenHash);
      },
      async revokeAccessToken(tokenHash: string): Promise<boolean> {
        await ready();
        const json = tokens.get(tokenHash);
        // Gone already (another revocation of it won): nothing removed, nothing to report.
        if (json === undefined) return false;
        const stored = decode<StoredToken>(json);
        // Only access tokens: a refresh token is revoked with its grant.
        if (stored.kind !== 'access') return false;
        remove(tokenHash, stored.record.grantId);
        revocations += 1;
        return true;
      },
      async revokeGrant(grantId: string): Promise<boolean> {
        await ready();
        const now = Date.now();
        // Whether this is the grant's first revocation, so that a second (another replay of its code) is not reported.
        const first = !revoked(revokedGrants, grantId, now);
        remember(revokedGrants, grantId, now);
        revocations += 1;
        for (const hash of [...(tokensByGrant.get(grantId) ?? [])]) remove(hash, grantId);
        return first;
      },
      async revokeClientTokens(clientId: string, userId?: string): Promise<void> {
        await ready();
        const now = Date.now();
        if (userId === undefined) remember(revokedClients, clientId, now);
        else remember(revokedUsers, pairKey(clientId, userId), now);
        revocations += 1;
        for (const [hash, json] of tokens) {
          const { kind, record } = decode<StoredToken>(json);
          if (record.clientId !== clientId || (userId !== undefined && record.userId !== userId)) continue;
          // A refresh under way read this refresh token already: its grant's tombstone refuses what it saves.
          if (kind === 'refresh') remember(revokedGrants, record.grantId, now);
          remove(hash, record.grantId);
        }
      },
    },
    dropClient(clientId: string): void {
      revocations += 1;
      for (const [hash, json] of tokens) {
        const { record } = decode<StoredToken>(json);
        if (record.clientId === clientId) remove(hash, record.grantId);
      }
    },
    revocationCount: () => revocations,
    recordCount: () => tokens.size + tokensByGrant.size + revokedGrants.size + revokedClients.size + revokedUsers.size,
    *sweep(now: number) {
      // Map iterators survive deletions and insertions made between two chunks by requests.
      let seen = 0;
      for (const [hash, json] of tokens) {
        const { record } = decode<StoredToken>(json);
        if (!isLive(record.expiresAt, now)) remove(hash, record.grantId);
        if (++seen % SWEEP_BATCH === 0) yield;
      }
      for (const map of [revokedGrants, revokedClients, revokedUsers]) {
        for (const [key, tombstone] of map) {
          if (tombstone.until <= now) map.delete(key);
          if (++seen % SWEEP_BATCH === 0) yield;
        }
      }
    },
  };
}
