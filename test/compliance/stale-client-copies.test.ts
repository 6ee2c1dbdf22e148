// RFC 6749 §5.2: an integration copy a store keeps (PostgreSQL, Redis) may be stale at any moment; no error answer rests on it alone.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { basic, createTestApp, type TestClient } from '../helpers/app.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { disableClient } from '../../src/clients/disable-client.js';
import { rotateClientSecret } from '../../src/clients/rotate-client-secret.js';
import type { ClientCopy, OAuthClient, Store } from '../../src/stores/contract.js';

/**
 * A memory store whose copies are kept as another instance keeps them: read once, then not told of changes made
 * elsewhere (the contract allows a copy to be stale at any moment; the save checks its revision).
 */
function storeWithStaleCopies(): Store {
  const inner = createMemoryStore({ sweepIntervalSeconds: 0 });
  const copies = new Map<string, ClientCopy>();
  let revision = 0;
  return {
    ...inner,
    clients: {
      ...inner.clients,
      async findClient(clientId) {
        const client = await inner.clients.findClient(clientId);
        if (client && !copies.has(clientId)) copies.set(clientId, { client: structuredClone(client) as OAuthClient, revision: String((revision += 1)) });
        return client;
      },
    },
    clientCopies: { find: (clientId) => copies.get(clientId) },
  };
}

describe('a stale integration copy at the token endpoint', () => {
  const cases = [
    ['disabled', (store: Store, client: TestClient) => disableClient(store, client.clientId)],
    ['its secret rotated', (store: Store, client: TestClient) => rotateClientSecret(store, client.clientId)],
  ] as const;

  it.each(cases)('integration %s: a grant its flow forbids, with the old secret, is invalid_client (401), as a lookup answers, not unauthorized_client', async (_label, change) => {
    const t = await createTestApp({}, storeWithStaleCopies());
    const wrongGrant = () => request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    // The first request reads the integration, which makes the copy; the flow refuses the grant.
    const before = await wrongGrant();
    expect(before.status).toBe(400);
    expect(before.body.error).toBe('unauthorized_client');
    expect(t.store.clientCopies!.find(t.codeClient.clientId)).toBeDefined();
    await change(t.store, t.codeClient);
    const after = await wrongGrant();
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('invalid_client');
    expect(after.headers['www-authenticate']).toMatch(/^Basic realm="/);
  });

  it.each(cases)('legacy integration %s: the old secret at the main address is the plain invalid_client, naming no address (SPEC §9, DESIGN §5)', async (_label, change) => {
    const t = await createTestApp({}, storeWithStaleCopies());
    const atMain = () => request(t.app).post('/oauth2/token').set('Authorization', basic(t.legacyCredentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    // Looked up, then from the copy: the right secret at the wrong address is told the right one.
    for (let i = 0; i < 2; i += 1) expect((await atMain()).body.error_description).toContain('legacy authorization server');
    expect(t.store.clientCopies!.find(t.legacyCredentialsClient.clientId)).toBeDefined();
    await change(t.store, t.legacyCredentialsClient);
    const after = await atMain();
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('invalid_client');
    expect(after.body.error_description ?? '').not.toMatch(/legacy|auth\.test|issued/);
  });
});
