// A disable or an enable is reported once: retried, or run by several instances at the same moment, only the call that changed the integration publishes client.disabled or client.enabled.
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/stores/contract.js';
import { createOAuthAdmin, type OAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';
import { builtInStores, sharedBackends, type OpenedStore } from '../helpers/built-in-stores.js';

/** Instances racing, each with its own store object on the shared backend, as app instances and oauth-admin are. */
const INSTANCES = 4;
const ROUNDS = 10;

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()!();
});

/** One store with an admin whose events are recorded by type, and a new client_credentials integration on it. */
async function oneStore(open: () => Promise<OpenedStore>) {
  const opened = await open();
  cleanup.push(() => opened.dispose());
  const events = new OAuthEvents();
  const seen: string[] = [];
  events.on('event', (event: OAuthEvent) => seen.push(event.type));
  const admin = createOAuthAdmin(opened.store, { events });
  const { client } = await registerClient(opened.store, { name: 'Partner sync', flow: 'client_credentials' });
  return { store: opened.store, admin, seen, clientId: client.clientId };
}

describe.each(builtInStores('status_once'))('disableClient and enableClient on the %s store: one event per change (README "Audit events")', (_label, available, open) => {
  it.skipIf(!available)('a retried disable publishes no second client.disabled, and says it was disabled already', async () => {
    const { admin, seen, clientId } = await oneStore(open);
    const first = await admin.disableClient(clientId);
    const retried = await admin.disableClient(clientId);
    expect(seen).toEqual(['client.disabled', 'token.revoked', 'token.revoked']);
    expect([first, retried]).toEqual([{ alreadyDisabled: false }, { alreadyDisabled: true }]);
    await admin.enableClient(clientId);
    expect(await admin.disableClient(clientId)).toEqual({ alreadyDisabled: false });
    expect(seen.filter((type) => type === 'client.disabled')).toHaveLength(2);
  });

  it.skipIf(!available)('enabling an enabled integration publishes nothing, and a retried enable no second client.enabled', async () => {
    const { store, admin, seen, clientId } = await oneStore(open);
    expect(await admin.enableClient(clientId)).toEqual({ alreadyEnabled: true });
    expect(seen).toEqual([]);
    await admin.disableClient(clientId);
    seen.length = 0;
    const first = await admin.enableClient(clientId);
    const retried = await admin.enableClient(clientId);
    expect(seen).toEqual(['client.enabled']);
    expect([first, retried]).toEqual([{ alreadyEnabled: false }, { alreadyEnabled: true }]);
    expect((await store.clients.findClient(clientId))?.disabled).toBe(false);
  });
});

/** A status change raced by every instance: what it publishes, and whether a call's result says it made the change. */
interface Change {
  readonly name: string;
  readonly event: 'client.disabled' | 'client.enabled';
  /** Brings a new integration to the status the change leaves, as its rounds need (an enable needs a disabled one). */
  readonly prepare: (admin: OAuthAdmin, clientId: string) => Promise<unknown>;
  /** Makes the change; resolves true when this call made it. */
  readonly make: (admin: OAuthAdmin, clientId: string) => Promise<boolean>;
}

const CHANGES: Change[] = [
  {
    name: 'disabling', event: 'client.disabled', prepare: async () => undefined,
    make: async (admin, clientId) => !(await admin.disableClient(clientId)).alreadyDisabled,
  },
  {
    name: 'enabling', event: 'client.enabled', prepare: (admin, clientId) => admin.disableClient(clientId),
    make: async (admin, clientId) => !(await admin.enableClient(clientId)).alreadyEnabled,
  },
];

describe.each(sharedBackends('status_once_shared'))('disableClient and enableClient through several instances of the %s store (README "Audit events")', (_label, available, backend) => {
  for (const change of CHANGES) it.skipIf(!available)(`${INSTANCES} instances ${change.name} one integration at once publish exactly one ${change.event}, in each of ${ROUNDS} rounds`, async () => {
    const shared = await backend();
    cleanup.push(() => shared.dispose());
    const peers: Store[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const peer = await shared.instance();
      cleanup.push(async () => { await peer.close?.(); });
      peers.push(peer);
    }
    const events = new OAuthEvents();
    const published: string[] = [];
    events.on(change.event, (event: { readonly clientId: string }) => published.push(event.clientId));
    const admins = peers.map((store) => createOAuthAdmin(store, { events }));
    // Warm, as a running server's pools are: a cold pool serialises the racers while it connects.
    await Promise.all(peers.map((store) => store.clients.findClient('warm-up')));
    for (let round = 0; round < ROUNDS; round++) {
      const { client } = await registerClient(peers[0]!, { name: `Partner ${round}`, flow: 'client_credentials' });
      await change.prepare(admins[0]!, client.clientId);
      const made = await Promise.all(admins.map((admin) => change.make(admin, client.clientId)));
      expect(published.filter((id) => id === client.clientId), `round ${round}: ${change.event} events`).toHaveLength(1);
      expect(made.filter(Boolean), `round ${round}`).toHaveLength(1);
    }
  });
});
