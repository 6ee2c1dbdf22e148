// An enable is reported once: retried, or run by several instances at the same moment, only the call that enabled it publishes client.enabled.
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';
import { builtInStores, sharedBackends } from '../helpers/built-in-stores.js';

/** Instances racing, each with its own store object on the shared backend, as app instances and oauth-admin are. */
const INSTANCES = 4;
const ROUNDS = 10;

const SHARED_BACKENDS = sharedBackends('enable_once_shared');

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

describe.each(builtInStores('enable_once'))('enableClient on the %s store: client.enabled once per enable (README "Audit events")', (_label, available, open) => {
  it.skipIf(!available)('enabling an enabled integration publishes nothing, and a retried enable no second client.enabled', async () => {
    const opened = await open();
    cleanup.push(() => opened.dispose());
    const events = new OAuthEvents();
    const seen: string[] = [];
    events.on('event', (event: OAuthEvent) => seen.push(event.type));
    const admin = createOAuthAdmin(opened.store, { events });
    const { client } = await registerClient(opened.store, { name: 'Partner sync', flow: 'client_credentials' });
    expect(await admin.enableClient(client.clientId)).toEqual({ alreadyEnabled: true });
    expect(seen).toEqual([]);
    await admin.disableClient(client.clientId);
    seen.length = 0;
    const first = await admin.enableClient(client.clientId);
    const retried = await admin.enableClient(client.clientId);
    expect(seen).toEqual(['client.enabled']);
    expect([first, retried]).toEqual([{ alreadyEnabled: false }, { alreadyEnabled: true }]);
    expect((await opened.store.clients.findClient(client.clientId))?.disabled).toBe(false);
  });
});

describe.each(SHARED_BACKENDS)('enableClient through several instances of the %s store (README "Audit events")', (_label, available, backend) => {
  it.skipIf(!available)(`${INSTANCES} instances enabling one disabled integration at once publish exactly one client.enabled, in each of ${ROUNDS} rounds`, async () => {
    const shared = await backend();
    cleanup.push(() => shared.dispose());
    const peers: Store[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const peer = await shared.instance();
      cleanup.push(async () => { await peer.close?.(); });
      peers.push(peer);
    }
    const events = new OAuthEvents();
    const enabled: string[] = [];
    events.on('client.enabled', (event) => enabled.push(event.clientId));
    const admins = peers.map((store) => createOAuthAdmin(store, { events }));
    // Warm, as a running server's pools are: a cold pool serialises the racers while it connects.
    await Promise.all(peers.map((store) => store.clients.findClient('warm-up')));
    for (let round = 0; round < ROUNDS; round++) {
      const { client } = await registerClient(peers[0]!, { name: `Partner ${round}`, flow: 'client_credentials' });
      await admins[0]!.disableClient(client.clientId);
      const results = await Promise.all(admins.map((admin) => admin.enableClient(client.clientId)));
      expect(enabled.filter((id) => id === client.clientId), `round ${round}: client.enabled events`).toHaveLength(1);
      expect(results.filter((result) => !result.alreadyEnabled), `round ${round}`).toHaveLength(1);
    }
  });
});
