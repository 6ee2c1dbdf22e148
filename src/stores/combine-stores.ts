// Builds one Store from parts of several, so each concern can live in the backend that suits it.
import type { Store } from './contract.js';

/** Which store serves each part. */
export interface StoreParts {
  readonly clients: Store;
  readonly codes: Store;
  readonly tokens: Store;
  /** The consents tier; default: the `clients` store's. */
  readonly consents?: Store;
  /** Signing keys of JWT access tokens; default: the `clients` store's. */
  readonly keys?: Store;
  /** Counters of the sign-in and client-authentication limits; default: the `tokens` store's (hot, expiring). */
  readonly rateLimits?: Store;
}

/**
 * A Store whose parts come from different backends, e.g. integrations and consents in PostgreSQL (durable,
 * queried by people) and codes and tokens in Redis (hot, expiring). Each part keeps its own guarantees: codes
 * and tokens of one grant must share a backend only within their part (`revokeGrant` works on the tokens
 * part; replay detection on the codes part). `close()` closes every distinct store once.
 * @see DESIGN §2 (the Store is split by concern).
 * @example
 * const sql = await createPostgresStore({ connectionString: process.env.DATABASE_URL });
 * const cache = await createRedisStore({ url: process.env.REDIS_URL });
 * const store = combineStores({ clients: sql, consents: sql, codes: cache, tokens: cache });
 */
export function combineStores(parts: StoreParts): Store {
  const keysFrom = parts.keys ?? parts.clients;
  const consentsFrom = parts.consents ?? parts.clients;
  const rateLimitsFrom = parts.rateLimits ?? parts.tokens;
  const distinct = [...new Set([parts.clients, parts.codes, parts.tokens, consentsFrom, keysFrom, rateLimitsFrom])];
  const consents = consentsFrom.consents;
  return {
    clients: parts.clients.clients,
    codes: parts.codes.codes,
    tokens: parts.tokens.tokens,
    ...(consents ? { consents } : {}),
    ...(keysFrom.keys ? { keys: keysFrom.keys } : {}),
    ...(rateLimitsFrom.rateLimits ? { rateLimits: rateLimitsFrom.rateLimits } : {}),
    // The feed tells of revocations in the tokens part, so it must come from the store that holds the tokens.
    ...(parts.tokens.revocations ? { revocations: parts.tokens.revocations } : {}),
    // Copies of integrations are safe only where the save checks their revision: in the store that made them.
    ...(parts.clients === parts.tokens && parts.clients.clientCopies ? { clientCopies: parts.clients.clientCopies } : {}),
    // Revocation moments are recorded against the tokens, so the clock that matters is their server's.
    ...(parts.tokens.backendTime ? { backendTime: () => parts.tokens.backendTime!() } : {}),
    ...(distinct.some((store) => store.checkReady) ? {
      async checkReady() {
        await Promise.all(distinct.map((store) => store.checkReady?.()));
      },
    } : {}),
    async close() {
      const results = await Promise.allSettled(distinct.map((store) => store.close?.()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

