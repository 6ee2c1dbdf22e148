// Test helper: fills a store with client_credentials integrations and looks each up once, as a token request would.
import { expect } from 'vitest';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import type { Store } from '../../src/stores/contract.js';

/**
 * Registers `count` client_credentials integrations and looks each up once, in order: each lookup keeps an
 * integration copy (contract `clientCopies`), so the last `maxIntegrationCopies` of them are the ones kept.
 */
export async function registerAndLookUp(store: Store, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const { client } = buildClient({ flow: 'client_credentials', redirectUris: [] });
    expect(await store.clients.createClient!(client)).toBe(true);
    ids.push(client.clientId);
  }
  for (const id of ids) expect(await store.clients.findClient(id)).not.toBeNull();
  return ids;
}
