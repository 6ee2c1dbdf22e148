// The memory store's integrations: insert-only create and field-by-field update, each in one synchronous block.
import type { ClientChanges, ClientStore, DisableClientOutcome, EnableClientOutcome, OAuthClient } from '../contract.js';
import { applyClientChanges, compareClients, DISABLE_CLIENT_CHANGES, ENABLE_CLIENT_CHANGES } from '../store-policy.js';
import { decode, encode, type Ready, type Encoded } from './codec.js';

/**
 * Integrations in a Map of stored copies. `updateClient` reads, applies the given fields and writes with no
 * await in between, so a disable racing a secret rotation keeps both changes. `deleteClient` calls
 * `onDelete` in the same synchronous block, which drops the integration's codes, consents and tokens.
 * @see RFC 6749 §2 (client registration).
 */
export function createMemoryClientStore(ready: Ready, onDelete: (clientId: string) => void): Required<ClientStore> {
  const clients = new Map<string, Encoded>();
  return {
    async findClient(clientId: string): Promise<OAuthClient | null> {
      await ready();
      const json = clients.get(clientId);
      return json === undefined ? null : decode<OAuthClient>(json);
    },
    async createClient(client: OAuthClient): Promise<boolean> {
      await ready();
      if (clients.has(client.clientId)) return false;
      clients.set(client.clientId, encode(client));
      return true;
    },
    async updateClient(clientId: string, changes: ClientChanges): Promise<OAuthClient | null> {
      await ready();
      const json = clients.get(clientId);
      if (json === undefined) return null;
      const updated = applyClientChanges(decode<OAuthClient>(json), changes);
      clients.set(clientId, encode(updated));
      return decode<OAuthClient>(clients.get(clientId)!);
    },
    async disableClient(clientId: string): Promise<DisableClientOutcome | null> {
      await ready();
      // Read and written with no await in between: of concurrent disables, one finds the integration enabled.
      const json = clients.get(clientId);
      if (json === undefined) return null;
      const current = decode<OAuthClient>(json);
      clients.set(clientId, encode(applyClientChanges(current, DISABLE_CLIENT_CHANGES)));
      return current.disabled ? 'already_disabled' : 'disabled';
    },
    async enableClient(clientId: string): Promise<EnableClientOutcome | null> {
      await ready();
      // Read and written with no await in between: of concurrent enables, one finds the integration disabled.
      const json = clients.get(clientId);
      if (json === undefined) return null;
      const current = decode<OAuthClient>(json);
      clients.set(clientId, encode(applyClientChanges(current, ENABLE_CLIENT_CHANGES)));
      return current.disabled ? 'enabled' : 'already_enabled';
    },
    async listClients(): Promise<readonly OAuthClient[]> {
      await ready();
      return [...clients.values()].map((json) => decode<OAuthClient>(json)).sort(compareClients);
    },
    async deleteClient(clientId: string): Promise<boolean> {
      await ready();
      // One synchronous block: the record and everything of it (codes, consents, tokens) go together.
      if (!clients.delete(clientId)) return false;
      onDelete(clientId);
      return true;
    },
  };
}
