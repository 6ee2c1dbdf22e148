// The stores that can reach codes and consents by integration remove them with it: stricter than the
// conformance rule ("gone or inert"), which a store that cannot (Redis) also meets.
import { describe, expect, it } from 'vitest';
import type { AdministrationStore, ConsentsStore } from '../../src/stores/contract.js';
import { buildClient, buildCode, buildConsent } from '../../src/testing/conformance-fixtures.js';
import { builtInStores } from '../helpers/built-in-stores.js';

/** Redis cannot reach codes and consents by integration: it leaves them inert, which the conformance rule allows. */
const STORES = builtInStores('delete_client').filter(([label]) => label !== 'Redis');

describe.each(STORES)('deleteClient of the %s store', (_name, available, open) => {
  it.skipIf(!available)("removes the integration's codes and consents, not only makes them inert (RFC 7009 §2.1)", async () => {
    const opened = await open();
    try {
      const store = opened.store as AdministrationStore & ConsentsStore;
      const { client } = buildClient();
      const { client: other } = buildClient();
      await store.clients.createClient(client);
      await store.clients.createClient(other);
      const code = buildCode({ clientId: client.clientId });
      await store.codes.saveCode(code);
      await store.consents.saveConsent(buildConsent({ userId: 'alice', clientId: client.clientId }));
      await store.consents.saveConsent(buildConsent({ userId: 'alice', clientId: other.clientId }));
      await store.tokens.revokeClientTokens(client.clientId);
      expect(await store.clients.deleteClient!(client.clientId)).toBe(true);
      expect((await store.codes.consumeCode(code.codeHash)).kind).toBe('not_found');
      expect(await store.consents.findConsent('alice', client.clientId)).toBeNull();
      expect((await store.consents.listConsents('alice')).map((c) => c.clientId)).toEqual([other.clientId]);
    } finally {
      await opened.dispose();
    }
  });
});
