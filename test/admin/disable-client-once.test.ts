// A disable is reported once: retried, or run by several instances at the same moment, only the call that disabled it publishes client.disabled.
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

const SHARED_BACKENDS = sharedBackends('disable_once_shared');

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

describe.each(builtInStores('disable_once'))('disableClient on the %s store: client.disabled once per disable (README "Audit events")', (_label, available, open) => {
  it.skipIf(!available)('a retried disable publishes no second client.disabled, and says it was disabled already', async () => {
    const opened = await open();
    cleanup.push(() => opened.dispose());
    const events = new OAuthEvents();
    const seen: string[] = [];
    events.on('event', (event: OAuthEvent) => seen.push(event.type));
    const admin = createOAuthAdmin(opened.store, { events });
    const { client } = await registerClient(opened.store, { name: 'Partner sync', flow: 'client_credentials' });
    const first = await admin.disableClient(client.clientId);
    const retried = await admin.disableClient(client.clientId);
    expect(seen).toEqual(['client.disabled', 'token.revoked', 'token.revoked']);
    expect([first, retried]).toEqual([{ alreadyDisabled: false }, { alreadyDisabled: true }]);
    await admin.enableClient(client.clientId);
    expect(await admin.disableClient(client.clientId)).toEqual({ alreadyDisabled: false });
    expect(seen.filter((type) => type === 'client.disabled')).toHaveLength(2);
  });

});

describe.each(SHARED_BACKENDS)('disableClient through several instances of the %s store (README "Audit events")', (_label, available, backend) => {
  it.skipIf(!available)(`${INSTANCES} instances disabling one integration at once publish exactly one client.disabled, in each of ${ROUNDS} rounds`, async () => {
    const shared = await backend();
    cleanup.push(() => shared.dispose());
    const peers: Store[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const peer = await shared.instance();
      cleanup.push(async () => { await peer.close?.(); });
      peers.push(peer);
    }
    const events = new OAuthEvents();
    const disabled: string[] = [];
    events.on('client.disabled', (event) => disabled.push(event.clientId));
    const admins = peers.map((store) => createOAuthAdmin(store, { events }));
    // Warm, as a running server's pools are: a cold pool serialises the racers while it connects.
    await Promise.all(peers.map((store) => store.clients.findClient('warm-up')));
    for (let round = 0; round < ROUNDS; round++) {
      const { client } = await registerClient(peers[0]!, { name: `Partner ${round}`, flow: 'client_credentials' });
      const results = await Promise.all(admins.map((admin) => admin.disableClient(client.clientId)));
      expect(disabled.filter((id) => id === client.clientId), `round ${round}: client.disabled events`).toHaveLength(1);
      expect(results.filter((result) => !result.alreadyDisabled), `round ${round}`).toHaveLength(1);
    }
  });
});
