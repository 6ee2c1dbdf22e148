// The SQLite store's integrations: insert-only create, and an update that is one statement writing only the given columns.
import type { ClientChanges, ClientStore, OAuthClient } from '../contract.js';
import type { SqliteChangeWatch } from './change-watch.js';
import type { SqliteConnection } from './driver.js';
import type { SqliteLockWait } from './lock-wait.js';
import { clientChangesToRow, clientToRow, rowToClient, type ClientRow } from './rows.js';
import type { SqliteStatements } from './statements.js';

/**
 * Integrations in the `clients` table. `updateClient` is a single `UPDATE … RETURNING` whose unchanged
 * columns keep what the row holds when SQLite writes it, under its one-writer lock: a disable racing a
 * secret rotation, from this process or another (the CLI), keeps both changes.
 * `listClients` orders by `created_at`, then `client_id` in BINARY collation, which is `compareClients`.
 * `deleteClient` removes the row, its codes, consents and tokens in one IMMEDIATE transaction.
 *
 * `findClient`, asked on every token request, answers from an in-process copy of the rows it read while
 * nothing can have changed them: the copies are dropped whenever another connection has committed (the
 * CLI disabling or rotating an integration; read once per turn, see `createSqliteChangeWatch`) or this
 * connection has written an integration (counted in `watch.own.clients`, seen at once). A row is kept only
 * if no such change came between the mark taken before its SELECT and the one after, and unknown ids are
 * never kept, so the copies are exactly what the SELECT would answer. Saves the SELECT and its read
 * transaction (8 % of a client_credentials request's busy samples).
 * @see RFC 6749 §2 (client registration), §2.3.1 (only the secret's hash is kept).
 */
export function createSqliteClientStore(
  db: SqliteConnection,
  s: SqliteStatements,
  { run }: SqliteLockWait,
  watch: SqliteChangeWatch,
): Required<ClientStore> {
  const { own } = watch;
  const rows = new Map<string, ClientRow>();
  let othersSeen: number | null = null;
  let ownSeen = own.clients;
  let generation = 0;
  /** The generation of the copies held, moved (and the copies dropped) by any change; `null` while the file cannot be read. */
  function mark(): number | null {
    const others = watch.others();
    if (others === null || others !== othersSeen || own.clients !== ownSeen) {
      rows.clear();
      othersSeen = others;
      ownSeen = own.clients;
      generation += 1;
    }
    return others === null ? null : generation;
  }
  /** Runs an integration write and counts it, committed or not: a cached copy never outlives it. */
  async function write<T>(operation: () => T): Promise<T> {
    try {
      return await run(operation);
    } finally {
      own.clients += 1;
    }
  }

  // IMMEDIATE: the write lock before the first statement, so the four deletes are one atomic step.
  const remove = db.transaction((clientId: string): boolean => {
    if (s.deleteClient.run(clientId).changes !== 1) return false;
    s.deleteClientCodes.run(clientId);
    s.deleteClientConsents.run(clientId);
    s.deleteClientTokens.run(clientId);
    return true;
  });
  return {
    async findClient(clientId: string): Promise<OAuthClient | null> {
      const before = mark();
      const cached = before === null ? undefined : rows.get(clientId);
      if (cached) return rowToClient(cached);
      return run(() => {
        const row = s.findClient.get(clientId);
        if (!row) return null;
        // 10,000 integrations is far past any deployment's count; past it, start over rather than grow.
        if (before !== null && mark() === before) {
          if (rows.size >= 10_000) rows.clear();
          rows.set(clientId, row);
        }
        return rowToClient(row);
      });
    },
    async createClient(client: OAuthClient): Promise<boolean> {
      return write(() => s.insertClient.run(clientToRow(client)).changes === 1);
    },
    async updateClient(clientId: string, changes: ClientChanges): Promise<OAuthClient | null> {
      return write(() => {
        const row = s.updateClient.get(clientChangesToRow(clientId, changes));
        return row ? rowToClient(row) : null;
      });
    },
    async listClients(): Promise<readonly OAuthClient[]> {
      return run(() => s.listClients.all().map(rowToClient));
    },
    async deleteClient(clientId: string): Promise<boolean> {
      return write(() => remove.immediate(clientId));
    },
  };
}
