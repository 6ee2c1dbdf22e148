// Conformance rules for integrations: full round trip, upsert, ordering, and no plain-text secrets.
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../crypto/hash-secret.js';
import { buildClient, secondsFromNow, type GetStore } from './conformance-fixtures.js';

/**
 * Registers the ClientStore rules.
 * @see RFC 6749 §2 (client registration), §2.3.1 (client password), §10.1 (client authentication).
 */
export function describeClientRules(getStore: GetStore): void {
  describe('clients', () => {
    it('saveClient then findClient round-trips every field, with Dates as Date objects', async () => {
      const { client } = buildClient();
      await getStore().clients.saveClient(client);
      const found = await getStore().clients.findClient(client.clientId);
      expect(found).toEqual(client);
      expect(found?.createdAt).toBeInstanceOf(Date);
      expect(found?.createdAt.getTime()).toBe(client.createdAt.getTime());
      expect(found?.credentialsIssuedAt).toBeInstanceOf(Date);
      expect(found?.credentialsIssuedAt.getTime()).toBe(client.credentialsIssuedAt.getTime());
    });

    it('a client_credentials integration round-trips empty redirectUris and allowedScopes as []', async () => {
      const { client } = buildClient({
        flow: 'client_credentials',
        redirectUris: [],
        allowedScopes: [],
        requirePkce: false,
      });
      await getStore().clients.saveClient(client);
      expect(await getStore().clients.findClient(client.clientId)).toEqual(client);
    });

    it('saveClient with an existing clientId replaces the integration (upsert)', async () => {
      const { client } = buildClient();
      await getStore().clients.saveClient(client);
      const { client: rotated, secret } = buildClient({
        clientId: client.clientId,
        createdAt: client.createdAt,
        name: 'Renamed',
        redirectUris: ['https://other.example.com/cb'],
        allowedScopes: ['envelopes:read'],
        requirePkce: false,
        disabled: true,
      });
      await getStore().clients.saveClient(rotated);
      const found = await getStore().clients.findClient(client.clientId);
      expect(found).toEqual(rotated);
      expect(found?.clientSecretHash).toBe(hashSecret(secret));
      expect(await getStore().clients.listClients()).toHaveLength(1);
    });

    it('listClients orders by createdAt, then by clientId', async () => {
      const early = secondsFromNow(-300);
      const late = secondsFromNow(-100);
      const saved = [
        buildClient({ clientId: 'client-c', createdAt: late }).client,
        buildClient({ clientId: 'client-b', createdAt: early }).client,
        buildClient({ clientId: 'client-d', createdAt: early }).client,
        buildClient({ clientId: 'client-a', createdAt: late }).client,
      ];
      for (const client of saved) await getStore().clients.saveClient(client);
      const listed = await getStore().clients.listClients();
      expect(listed.map((c) => c.clientId)).toEqual(['client-b', 'client-d', 'client-a', 'client-c']);
      for (const client of listed) expect(client.createdAt).toBeInstanceOf(Date);
    });

    it('the stored client secret hash is never the secret itself', async () => {
      const { client, secret } = buildClient();
      await getStore().clients.saveClient(client);
      const found = await getStore().clients.findClient(client.clientId);
      expect(found?.clientSecretHash).not.toBe(secret);
      expect(found?.clientSecretHash).toBe(hashSecret(secret));
      const listed = await getStore().clients.listClients();
      expect(JSON.stringify(listed)).not.toContain(secret);
    });
  });
}
