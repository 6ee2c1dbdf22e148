// Shared cases: a store's copies of integrations are served while its feed's mark holds and dropped on any instance's change.
import { expect, it } from 'vitest';
import type { AdministrationClientStore, RevocationFeed } from '../../src/stores/contract.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';
import { NOTIFIED } from './bearer-cache.js';

/** Two instances on one backend; `reads()` counts A's record reads of an integration. */
export interface TwoStores {
  readonly a: { readonly clients: AdministrationClientStore; readonly revocations?: RevocationFeed };
  readonly b: { readonly clients: AdministrationClientStore; readonly revocations?: RevocationFeed };
  readonly reads: () => number;
}

/** The cases, for a store whose feed hears every instance's integration writes. @see issue 10. */
export function clientCopiesCases(twoStores: () => Promise<TwoStores>): void {
  it('answers a known integration again without a read while the mark holds', async () => {
    const { a, b, reads } = await twoStores();
    const { client } = buildClient();
    const before = a.revocations!.mark();
    await b.clients.createClient(client);
    // B's write tells A too (dropping nothing yet): wait for it so it does not land mid-test.
    await expect.poll(() => a.revocations!.mark(), NOTIFIED).not.toBe(before);
    expect(await a.clients.findClient(client.clientId)).toEqual(client);
    const after = reads();
    expect(after).toBeGreaterThan(0);
    for (let i = 0; i < 3; i += 1) expect(await a.clients.findClient(client.clientId)).toEqual(client);
    expect(reads(), 'served from the copy').toBe(after);
  });

  it("sees another instance's disable, secret rotation and deletion once its notification arrives", async () => {
    const { a, b } = await twoStores();
    const { client } = buildClient();
    await b.clients.createClient(client);
    expect((await a.clients.findClient(client.clientId))?.disabled).toBe(false);
    await b.clients.updateClient(client.clientId, { disabled: true });
    await expect.poll(async () => (await a.clients.findClient(client.clientId))?.disabled, NOTIFIED).toBe(true);
    await b.clients.updateClient(client.clientId, { clientSecretHash: 'rotated-hash' });
    await expect.poll(async () => (await a.clients.findClient(client.clientId))?.clientSecretHash, NOTIFIED).toBe('rotated-hash');
    const before = a.revocations!.mark();
    await b.clients.deleteClient!(client.clientId);
    await expect.poll(() => a.revocations!.mark(), NOTIFIED).not.toBe(before);
    expect(await a.clients.findClient(client.clientId)).toBeNull();
  });

  it("sees its own instance's writes at once, keeps no copy of an unknown id, and shares no object with a caller", async () => {
    const { a, b } = await twoStores();
    const { client } = buildClient();
    expect(await a.clients.findClient(client.clientId)).toBeNull();
    await b.clients.createClient(client);
    expect(await a.clients.findClient(client.clientId)).toEqual(client);
    await a.clients.updateClient(client.clientId, { name: 'Renamed' });
    expect((await a.clients.findClient(client.clientId))?.name).toBe('Renamed');
    const found = await a.clients.findClient(client.clientId);
    (found!.redirectUris as string[]).push('https://evil.example.com/cb');
    expect((await a.clients.findClient(client.clientId))?.redirectUris).toEqual(client.redirectUris);
  });
}
