// First start: registers one demo integration per flow; later starts find them again.
import { registerClient, type OAuthClient, type Store } from 'express-oauth-router';

/** The names the demo integrations are registered (and found again) under. */
export const DEMO_CODE_CLIENT_NAME = 'Acme Sign demo (authorization code)';
export const DEMO_CC_CLIENT_NAME = 'Acme Sign demo (client credentials)';
const DEMO_SCOPES = ['envelopes:read', 'envelopes:write'];

/** A demo integration; `clientSecret` only right after registration (the store keeps only its hash). */
export interface DemoClient {
  readonly clientId: string;
  readonly clientSecret: string | null;
}

/** What `seedDemoClients` found or made. */
export interface DemoClients {
  /** True when this start registered them (and so can show their secrets, once). */
  readonly created: boolean;
  readonly code: DemoClient | null;
  readonly clientCredentials: DemoClient | null;
  /** How many integrations the store holds in all. */
  readonly total: number;
}

function findDemo(clients: readonly OAuthClient[], name: string): DemoClient | null {
  const client = clients.find((c) => c.name === name && !c.disabled);
  return client ? { clientId: client.clientId, clientSecret: null } : null;
}

/**
 * On an empty store (no integration at all, so a real deployment's store is never touched) registers an
 * authorization_code integration with `redirectUri` and a client_credentials one. Otherwise returns the
 * demo integrations already there, without secrets: those cannot be recovered, only rotated.
 * @see RFC 6749 §2 (client registration).
 */
export async function seedDemoClients(store: Store, redirectUri: string): Promise<DemoClients> {
  const existing = await store.clients.listClients();
  if (existing.length > 0) {
    return {
      created: false,
      code: findDemo(existing, DEMO_CODE_CLIENT_NAME),
      clientCredentials: findDemo(existing, DEMO_CC_CLIENT_NAME),
      total: existing.length,
    };
  }
  const code = await registerClient(store, {
    name: DEMO_CODE_CLIENT_NAME,
    flow: 'authorization_code',
    redirectUris: [redirectUri],
    allowedScopes: DEMO_SCOPES,
  });
  const clientCredentials = await registerClient(store, {
    name: DEMO_CC_CLIENT_NAME,
    flow: 'client_credentials',
    allowedScopes: DEMO_SCOPES,
  });
  const mine = [code.client, clientCredentials.client];
  const winner = await settleFirstStartRace(store, code.client.clientId);
  if (winner !== code.client.clientId) {
    // Another instance registered the demo first: ours are withdrawn and theirs reported, without secrets.
    for (const client of mine) await store.clients.saveClient({ ...client, disabled: true });
    const all = await store.clients.listClients();
    return {
      created: false,
      code: findDemo(all, DEMO_CODE_CLIENT_NAME),
      clientCredentials: findDemo(all, DEMO_CC_CLIENT_NAME),
      total: all.length,
    };
  }
  return {
    created: true,
    code: { clientId: code.client.clientId, clientSecret: code.clientSecret },
    clientCredentials: { clientId: clientCredentials.client.clientId, clientSecret: clientCredentials.clientSecret },
    total: (await store.clients.listClients()).length,
  };
}

/** How long a first start waits for a concurrently starting instance's registrations to become visible. */
const SETTLE_MS = 300;

/**
 * Several instances starting together on one empty shared store (PostgreSQL, Redis) all see it empty and
 * all register a demo pair. The Store has no "insert if absent" for clients, so they agree afterwards:
 * once every racer's registration is visible, the first demo authorization_code integration in
 * `listClients()` order (createdAt, then clientId — the same order for everyone) wins, and every other
 * racer disables its own pair. Returns the winning client_id.
 */
async function settleFirstStartRace(store: Store, ownCodeClientId: string): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const first = (await store.clients.listClients()).find((c) => c.name === DEMO_CODE_CLIENT_NAME && !c.disabled);
  return first?.clientId ?? ownCodeClientId;
}
