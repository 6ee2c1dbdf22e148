// In-process Store for tests and single-process demos: records kept as JSON strings, like a real database.
import type {
  AuthorizationCodeRecord,
  ConsentRecord,
  ConsumeResult,
  OAuthClient,
  Store,
  TokenRecord,
} from '../contract.js';
import { createMemoryKeyStore } from './keys.js';

/** How long a revoked grant is remembered so that a racing `saveTokens` is refused (contract: ≥ 24 h). */
const REVOKED_GRANT_TTL_MS = 24 * 60 * 60 * 1000;
/** How often the unref'd timer drops expired codes, tokens and tombstones. */
const SWEEP_INTERVAL_MS = 60_000;
/** Keys whose values are Dates in every record type; revived from ISO strings on read. */
const DATE_KEYS = new Set(['expiresAt', 'createdAt', 'credentialsIssuedAt', 'grantedAt']);

type TokenKind = 'access' | 'refresh';
interface StoredCode {
  readonly record: AuthorizationCodeRecord;
  readonly consumedAt: number | null;
}
interface StoredToken {
  readonly kind: TokenKind;
  readonly record: TokenRecord;
}

/** Serialises a record so the store never shares an object with its caller. */
function encode(value: unknown): string {
  return JSON.stringify(value);
}

/** Parses a stored record, turning date fields back into `Date` objects. */
function decode<T>(json: string): T {
  return JSON.parse(json, (key, value: unknown) =>
    DATE_KEYS.has(key) && typeof value === 'string' ? new Date(value) : value,
  ) as T;
}

/** Resolves on a later turn of the event loop, so callers cannot rely on synchronous answers. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function isLive(expiresAt: Date, now: number): boolean {
  return expiresAt.getTime() > now;
}

/**
 * Creates an independent in-memory Store. Nothing is shared between two calls and nothing survives the
 * process, so use it for tests and demos; use the SQLite store (one file) or PostgreSQL/Redis otherwise.
 *
 * Like express-session's MemoryStore, it keeps every record as a JSON string and answers on a later
 * event-loop turn, so code written against it does not come to depend on shared references or on
 * synchronous answers that a real database would not give.
 *
 * `consumeCode` checks and marks the code in one synchronous block: of N concurrent calls exactly one
 * wins (RFC 6749 §4.1.2, "MUST NOT use the authorization code more than once"). Consumed codes are kept
 * until they expire so that replays are reported; revoked grants are remembered for 24 hours. Expired
 * records read as absent at once and are swept by a timer that `close()` clears.
 *
 * @example
 * ```ts
 * import { createMemoryStore } from 'express-oauth-router/stores/memory';
 * const store = createMemoryStore();
 * ```
 * @see RFC 6749 §4.1.2 (single-use codes), §10.5 (codes), RFC 7009 §2.1 (revocation).
 */
export function createMemoryStore(): Store {
  const clients = new Map<string, string>();
  const codes = new Map<string, string>();
  const tokens = new Map<string, string>();
  /** grantId → token hashes, so that revoking a grant does not scan every token. */
  const tokensByGrant = new Map<string, Set<string>>();
  const revokedGrants = new Map<string, number>();
  const consents = new Map<string, string>();
  let closed = false;

  /** Every operation starts here: waits a turn, then refuses to run on a closed store. */
  async function ready(): Promise<void> {
    await nextTurn();
    if (closed) throw new Error('the memory store is closed');
  }

  function consentKey(userId: string, clientId: string): string {
    // JSON of the pair, not a join: no separator character can make two pairs collide.
    return JSON.stringify([userId, clientId]);
  }

  function putToken(kind: TokenKind, record: TokenRecord): void {
    tokens.set(record.tokenHash, encode({ kind, record } satisfies StoredToken));
    let hashes = tokensByGrant.get(record.grantId);
    if (!hashes) tokensByGrant.set(record.grantId, (hashes = new Set()));
    hashes.add(record.tokenHash);
  }

  function deleteToken(tokenHash: string, grantId: string): void {
    tokens.delete(tokenHash);
    const hashes = tokensByGrant.get(grantId);
    hashes?.delete(tokenHash);
    if (hashes?.size === 0) tokensByGrant.delete(grantId);
  }

  function findToken(kind: TokenKind, tokenHash: string): TokenRecord | null {
    const json = tokens.get(tokenHash);
    if (json === undefined) return null;
    const stored = decode<StoredToken>(json);
    if (stored.kind !== kind) return null;
    if (!isLive(stored.record.expiresAt, Date.now())) {
      deleteToken(tokenHash, stored.record.grantId);
      return null;
    }
    return stored.record;
  }

  function isGrantRevoked(grantId: string, now: number): boolean {
    const until = revokedGrants.get(grantId);
    return until !== undefined && until > now;
  }

  function sweep(): void {
    const now = Date.now();
    for (const [hash, json] of codes) {
      if (!isLive(decode<StoredCode>(json).record.expiresAt, now)) codes.delete(hash);
    }
    for (const [hash, json] of tokens) {
      const { record } = decode<StoredToken>(json);
      if (!isLive(record.expiresAt, now)) deleteToken(hash, record.grantId);
    }
    for (const [grantId, until] of revokedGrants) {
      if (until <= now) revokedGrants.delete(grantId);
    }
  }

  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  // A store must never keep the process alive on its own.
  timer.unref();

  return {
    clients: {
      async findClient(clientId: string): Promise<OAuthClient | null> {
        await ready();
        const json = clients.get(clientId);
        return json === undefined ? null : decode<OAuthClient>(json);
      },
      async saveClient(client: OAuthClient): Promise<void> {
        await ready();
        clients.set(client.clientId, encode(client));
      },
      async listClients(): Promise<readonly OAuthClient[]> {
        await ready();
        return [...clients.values()]
          .map((json) => decode<OAuthClient>(json))
          .sort(
            (a, b) =>
              a.createdAt.getTime() - b.createdAt.getTime() ||
              (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0),
          );
      },
    },

    codes: {
      async saveCode(record: AuthorizationCodeRecord): Promise<void> {
        await ready();
        codes.set(record.codeHash, encode({ record, consumedAt: null } satisfies StoredCode));
      },
      async consumeCode(codeHash: string): Promise<ConsumeResult<AuthorizationCodeRecord>> {
        await ready();
        // Check and mark in this one synchronous block, with no await in between: that is what makes
        // the consume atomic (the check-then-await-then-set race of oidc-provider's grant_common.js).
        const json = codes.get(codeHash);
        if (json === undefined) return { kind: 'not_found' };
        const stored = decode<StoredCode>(json);
        const now = Date.now();
        if (!isLive(stored.record.expiresAt, now)) {
          codes.delete(codeHash);
          return { kind: 'not_found' };
        }
        if (stored.consumedAt !== null) return { kind: 'replayed', grantId: stored.record.grantId };
        codes.set(codeHash, encode({ record: stored.record, consumedAt: now } satisfies StoredCode));
        return { kind: 'consumed', record: stored.record };
      },
    },

    tokens: {
      async saveTokens(access: TokenRecord, refresh: TokenRecord | null): Promise<boolean> {
        await ready();
        // Check the tombstone and write in one synchronous block, so a racing revokeGrant is either
        // entirely before (we refuse) or entirely after (it removes what we wrote).
        const now = Date.now();
        if (isGrantRevoked(access.grantId, now)) return false;
        if (refresh && isGrantRevoked(refresh.grantId, now)) return false;
        putToken('access', access);
        if (refresh) putToken('refresh', refresh);
        return true;
      },
      async findAccessToken(tokenHash: string): Promise<TokenRecord | null> {
        await ready();
        return findToken('access', tokenHash);
      },
      async findRefreshToken(tokenHash: string): Promise<TokenRecord | null> {
        await ready();
        return findToken('refresh', tokenHash);
      },
      async revokeAccessToken(tokenHash: string): Promise<void> {
        await ready();
        const json = tokens.get(tokenHash);
        if (json === undefined) return;
        const stored = decode<StoredToken>(json);
        // Only access tokens: a refresh token is revoked with its grant.
        if (stored.kind === 'access') deleteToken(tokenHash, stored.record.grantId);
      },
      async revokeGrant(grantId: string): Promise<void> {
        await ready();
        const until = Date.now() + REVOKED_GRANT_TTL_MS;
        revokedGrants.set(grantId, Math.max(until, revokedGrants.get(grantId) ?? 0));
        for (const hash of [...(tokensByGrant.get(grantId) ?? [])]) deleteToken(hash, grantId);
      },
      async revokeClientTokens(clientId: string, userId?: string): Promise<void> {
        await ready();
        for (const [hash, json] of tokens) {
          const { record } = decode<StoredToken>(json);
          if (record.clientId !== clientId) continue;
          if (userId !== undefined && record.userId !== userId) continue;
          deleteToken(hash, record.grantId);
        }
      },
    },

    consents: {
      async findConsent(userId: string, clientId: string): Promise<ConsentRecord | null> {
        await ready();
        const json = consents.get(consentKey(userId, clientId));
        return json === undefined ? null : decode<ConsentRecord>(json);
      },
      async saveConsent(record: ConsentRecord): Promise<void> {
        await ready();
        consents.set(consentKey(record.userId, record.clientId), encode(record));
      },
      async revokeConsent(userId: string, clientId: string): Promise<void> {
        await ready();
        consents.delete(consentKey(userId, clientId));
      },
      async listConsents(userId: string): Promise<readonly ConsentRecord[]> {
        await ready();
        return [...consents.values()]
          .map((json) => decode<ConsentRecord>(json))
          .filter((consent) => consent.userId === userId)
          .sort(
            (a, b) =>
              a.grantedAt.getTime() - b.grantedAt.getTime() ||
              (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0),
          );
      },
    },

    keys: createMemoryKeyStore(ready),

    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
    },
  };
}
