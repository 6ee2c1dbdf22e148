// The SQLite store's integrations: insert-only create, and an update that is one statement writing only the given columns.
import type { ClientChanges, ClientStore, OAuthClient } from '../contract.js';
import type { SqliteConnection } from './driver.js';
import type { SqliteLockWait } from './lock-wait.js';
import { clientChangesToRow, clientToRow, rowToClient } from './rows.js';
import type { SqliteStatements } from './statements.js';

/**
 * Integrations in the `clients` table. `updateClient` is a single `UPDATE … RETURNING` whose unchanged
 * columns keep what the row holds when SQLite writes it, under its one-writer lock: a disable racing a
 * secret rotation, from this process or another (the CLI), keeps both changes.
 * `listClients` orders by `created_at`, then `client_id` in BINARY collation, which is `compareClients`.
 * `deleteClient` removes the row, its codes, consents and tokens in one IMMEDIATE transaction.
 * @see RFC 6749 §2 (client registration), §2.3.1 (only the secret's hash is kept).
 */
export function createSqliteClientStore(
  db: SqliteConnection,
  s: SqliteStatements,
  { run }: SqliteLockWait,
): Required<ClientStore> {
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
      return run(() => {
        const row = s.findClient.get(clientId);
        return row ? rowToClient(row) : null;
      });
    },
    async createClient(client: OAuthClient): Promise<boolean> {
      return run(() => s.insertClient.run(clientToRow(client)).changes === 1);
    },
    async updateClient(clientId: string, changes: ClientChanges): Promise<OAuthClient | null> {
      return run(() => {
        const row = s.updateClient.get(clientChangesToRow(clientId, changes));
        return row ? rowToClient(row) : null;
      });
    },
    async listClients(): Promise<readonly OAuthClient[]> {
      return run(() => s.listClients.all().map(rowToClient));
    },
    async deleteClient(clientId: string): Promise<boolean> {
      return run(() => remove.immediate(clientId));
    },
  };
}
