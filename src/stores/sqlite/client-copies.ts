// The SQLite store's integrations kept in process while its change mark holds: findClient without a SELECT.
import type { OAuthClient } from '../contract.js';
import { copyClient } from '../copy-client.js';
import { setBounded } from '../set-bounded.js';
import { DEFAULT_INTEGRATION_COPIES } from '../integration-copies-option.js';

/** The copies of one store's integrations. */
export interface ClientCopies {
  /** The integration, from its copy while the mark holds, otherwise from `load` (kept if the mark held throughout). */
  find(clientId: string, load: () => Promise<OAuthClient | null>): Promise<OAuthClient | null>;
}

/**
 * `mark()` must move whenever any integration may have changed, and be read fresh for each call: a token
 * request takes its `startedAt` (a revocation at or after it voids what it issues) before it asks for the
 * integration, so the answer must reflect every change committed before the call. SQLite's data_version, with
 * the integration counter the schema's triggers keep in the same file, is exact and costs 1.4 µs; a notification feed (PostgreSQL, Redis) lags by its latency, and a copy served
 * within it would let a request that began after a disable or a rotation get a token no tombstone refuses,
 * which is why only this store's `findClient` answers from copies it trusts (the token endpoint's copies, in
 * every store, are checked by the save instead: revision-copies.ts). `null` (the file cannot be read): nothing is served from, or
 * kept in, the copies. A loaded row is kept
 * only if the mark read before the load still holds after it, so a change racing the load is never hidden;
 * unknown ids are never kept, so probing random ids fills nothing.
 * @see RFC 6749 §2 (client registration), §2.3.1 (a disabled integration or a rotated secret counts at once).
 */
export function createClientCopies(mark: () => number | null, maxCopies: number = DEFAULT_INTEGRATION_COPIES): ClientCopies {
  const copies = new Map<string, OAuthClient>();
  let held: number | null = null;
  function current(): number | null {
    const now = mark();
    if (now === null || now !== held) {
      copies.clear();
      held = now;
    }
    return now;
  }
  return {
    async find(clientId, load) {
      const before = current();
      const copy = before === null ? undefined : copies.get(clientId);
      if (copy) return copyClient(copy);
      const client = await load();
      if (client && before !== null && current() === before) {
        setBounded(copies, clientId, copyClient(client), maxCopies);
      }
      return client;
    },
  };
}
