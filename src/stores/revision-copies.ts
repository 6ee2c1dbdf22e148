// Integrations kept as last read, with their stored revision, for a store whose saves check that revision.
import type { ClientCopy, OAuthClient } from './contract.js';
import { copyClient } from './copy-client.js';
import { setBounded } from './set-bounded.js';
import { DEFAULT_INTEGRATION_COPIES } from './integration-copies-option.js';

/** One store's kept integrations (its `clientCopies` part). */
export interface RevisionCopies {
  /** The copy kept for the id, or `undefined`. Shared and frozen: a caller reads it, never changes it. */
  get(clientId: string): ClientCopy | undefined;
  /** Keeps what a lookup read, replacing the id's copy unless it holds that revision already: the newest read wins. */
  keep(client: OAuthClient, revision: string): void;
  /** Drops the id's copy (this process changed or deleted the integration). */
  forget(clientId: string): void;
  /** Drops every copy: the revisions they carry may no longer tell versions apart (a failover, see the PostgreSQL store). */
  clear(): void;
}

/**
 * Copies kept without any notion of freshness: a copy may be stale at any time, which is safe only because
 * the store's `saveTokens` refuses a `clientRevision` that is no longer the stored one, and the router, on a
 * refusal, asks again with a lookup (contract, `ClientCopies`). So nothing here listens, expires or times
 * out: a changed integration is read again by the request that first trips over the change. Only records a
 * lookup found are kept, so unknown ids fill nothing; past `maxCopies` the oldest copy goes for each new one.
 * @see RFC 6749 §2.3.1 (client authentication).
 */
export function createRevisionCopies(maxCopies: number = DEFAULT_INTEGRATION_COPIES): RevisionCopies {
  const copies = new Map<string, ClientCopy>();
  return {
    get: (clientId) => copies.get(clientId),
    keep(client, revision) {
      // The same revision is the same record: every lookup of an unchanged integration (each code exchange's,
      // each authorize's) would otherwise copy and freeze it again.
      if (copies.get(client.clientId)?.revision === revision) return;
      const kept = copyClient(client);
      Object.freeze(kept.redirectUris);
      Object.freeze(kept.allowedScopes);
      setBounded(copies, client.clientId, Object.freeze({ client: Object.freeze(kept), revision }), maxCopies);
    },
    forget: (clientId) => {
      copies.delete(clientId);
    },
    clear: () => {
      copies.clear();
    },
  };
}
