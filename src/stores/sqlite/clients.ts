// The SQLite store's integrations: insert-only create, and an update that is one statement writing only the given columns.
import type { ClientChanges, ClientStore, DisableClientOutcome, EnableClientOutcome, OAuthClient } from '../contract.js';
import { DISABLE_CLIENT_CHANGES, ENABLE_CLIENT_CHANGES } from '../store-policy.js';
import type { SqliteChangeWatch } from './change-watch.js';
import type { SqliteConnection } from './driver.js';
import type { SqliteLockWait } from './lock-wait.js';
import { clientChangesToRow, clientToRow, rowToClient } from './rows.js';
import { createClientCopies } from './client-copies.js';
import type { RevisionCopies } from '../revision-copies.js';
import { clientRevisionOf } from './client-revision.js';
import type { SqliteStatements } from './statements.js';

/**
 * Integrations in the `clients` table. `updateClient` is a single `UPDATE … RETURNING` whose unchanged
 * columns keep what the row holds when SQLite writes it, under its one-writer lock: a disable racing a
 * secret rotation, from this process or another (the CLI), keeps both changes.
 * `listClients` orders by `created_at`, then `client_id` in BINARY collation, which is `compareClients`.
 * `deleteClient` removes the row, its codes, consents and tokens in one IMMEDIATE transaction.
 *
 * `findClient`, asked on every token request, answers from an in-process copy of the rows it read while
 * nothing can have changed them: the copies are dropped whenever another connection has committed a write of
 * an integration (the CLI disabling or rotating one; data_version read on each call, and when it moved, the
 * integration counter schema 9's triggers keep) or this
 * connection has written an integration (counted in `watch.own.clients`, seen at once); see
 * `createClientCopies` for what is kept and when. Saves the SELECT and the row's decoding (about 5 %
 * of a client_credentials request's busy samples; the pragma read that replaces them is 1.4 µs).
 *
 * Each row it reads is also kept in `revisions` (the store's `clientCopies` part), its revision being the row's
 * own values (client-revision.ts), for the token endpoint: a request authenticated from that copy reads nothing
 * at all, not even data_version, and its save compares the row with those values inside the batch's write
 * transaction (`isRefusedAtRevision`), so a change committed by any writer before the save (another process, the
 * CLI, a DBA's SQL, a restored file) refuses it and the router asks again with a lookup. No trigger, version column
 * or counter is involved, so none can be dropped, set back or written over. Those copies are not dropped when
 * another connection commits (another process's token saves, on a file several share), only replaced by the next
 * lookup of the id or forgotten on this store's own write of it.
 * @see RFC 6749 §2 (client registration), §2.3.1 (only the secret's hash is kept).
 */
export function createSqliteClientStore(
  db: SqliteConnection,
  s: SqliteStatements,
  { run }: SqliteLockWait,
  watch: SqliteChangeWatch,
  guarded: <T>(write: () => T) => T,
  revisions: RevisionCopies,
  maxCopies?: number,
): Required<ClientStore> {
  const { own } = watch;
  // data_version read on every findClient, not once per turn: a copy is then never older than the token
  // request that reads it (which took its startedAt before), so a token request that began after a disable
  // or a rotation committed by the CLI cannot be served from a copy made before it.
  const copies = createClientCopies(watch.markOf('clients', true), maxCopies);
  /**
   * Runs an integration write and counts it in the same synchronous block as its commit (or its failure), so
   * no findClient can read a copy between the two.
   */
  function write<T>(operation: () => T): Promise<T> {
    return run(() => {
      try {
        return guarded(operation);
      } finally {
        own.clients += 1;
      }
    });
  }

  // IMMEDIATE: the write lock before the first statement, so the four deletes are one atomic step.
  const remove = db.transaction((clientId: string): boolean => {
    if (s.deleteClient.run(clientId).changes !== 1) return false;
    s.deleteClientCodes.run(clientId);
    s.deleteClientConsents.run(clientId);
    s.deleteClientTokens.run(clientId);
    return true;
  });
  // IMMEDIATE: the write lock before the read, so no other connection or process disables it in between.
  const disable = db.transaction((clientId: string): DisableClientOutcome | null => {
    const row = s.findClient.get(clientId);
    if (!row) return null;
    s.updateClient.get(clientChangesToRow(clientId, DISABLE_CLIENT_CHANGES));
    return row.disabled === 1 ? 'already_disabled' : 'disabled';
  });
  // IMMEDIATE too, so of concurrent enables from any connection or process one finds the integration disabled.
  const enable = db.transaction((clientId: string): EnableClientOutcome | null => {
    const row = s.findClient.get(clientId);
    if (!row) return null;
    s.updateClient.get(clientChangesToRow(clientId, ENABLE_CLIENT_CHANGES));
    return row.disabled === 1 ? 'enabled' : 'already_enabled';
  });
  return {
    async findClient(clientId: string): Promise<OAuthClient | null> {
      return copies.find(clientId, () => run(() => {
        const row = s.findClient.get(clientId);
        if (!row) return null;
        const client = rowToClient(row);
        revisions.keep(client, clientRevisionOf(row));
        return client;
      }));
    },
    async createClient(client: OAuthClient): Promise<boolean> {
      revisions.forget(client.clientId);
      return write(() => s.insertClient.run(clientToRow(client)).changes === 1);
    },
    async updateClient(clientId: string, changes: ClientChanges): Promise<OAuthClient | null> {
      revisions.forget(clientId);
      return write(() => {
        const row = s.updateClient.get(clientChangesToRow(clientId, changes));
        return row ? rowToClient(row) : null;
      });
    },
    async disableClient(clientId: string): Promise<DisableClientOutcome | null> {
      revisions.forget(clientId);
      return write(() => disable.immediate(clientId));
    },
    async enableClient(clientId: string): Promise<EnableClientOutcome | null> {
      revisions.forget(clientId);
      return write(() => enable.immediate(clientId));
    },
    async listClients(): Promise<readonly OAuthClient[]> {
      return run(() => s.listClients.all().map(rowToClient));
    },
    async deleteClient(clientId: string): Promise<boolean> {
      revisions.forget(clientId);
      return write(() => remove.immediate(clientId));
    },
  };
}
