// First start: registers one demo integration per flow; later starts find them again, on whatever port they listen.
import { ClientExistsError, registerClient, type OAuthClient, type Store } from 'express-oauth-router';
import { ensureDemoRedirectUri } from './demo-redirect-uri.js';

/** The names the demo integrations are registered (and found again) under. */
export const DEMO_CODE_CLIENT_NAME = 'Acme Sign demo (authorization code)';
export const DEMO_CC_CLIENT_NAME = 'Acme Sign demo (client credentials)';
const DEMO_SCOPES = ['envelopes:read', 'envelopes:write'];
/**
 * Fixed ids for the demo integrations: `createClient` inserts only, so of several instances starting together
 * on one empty shared store exactly one registers each, with no waiting. The secret is what protects an
 * integration; its id is not a secret (RFC 6749 §2.2).
 */
const DEMO_CODE_CLIENT_ID = 'acme-sign-demo-web';
const DEMO_CC_CLIENT_ID = 'acme-sign-demo-backend';

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
 * authorization_code integration with `redirectUri` and a client_credentials one, under fixed ids. Otherwise,
 * or when another instance starting at the same moment registered them first, returns the demo integrations
 * already there, without secrets: those cannot be recovered, only rotated; and adds `redirectUri` (this
 * start's port) to the demo integration's redirect URIs, keeping the others (see `ensureDemoRedirectUri`).
 * @see RFC 6749 §2 (client registration).
 */
export async function seedDemoClients(store: Store, redirectUri: string): Promise<DemoClients> {
  if ((await listAll(store)).length === 0) {
    try {
      const code = await registerClient(store, {
        clientId: DEMO_CODE_CLIENT_ID, name: DEMO_CODE_CLIENT_NAME, flow: 'authorization_code',
        redirectUris: [redirectUri], allowedScopes: DEMO_SCOPES,
      });
      const clientCredentials = await registerClient(store, {
        clientId: DEMO_CC_CLIENT_ID, name: DEMO_CC_CLIENT_NAME, flow: 'client_credentials', allowedScopes: DEMO_SCOPES,
      });
      return {
        created: true,
        code: { clientId: code.client.clientId, clientSecret: code.clientSecret },
        clientCredentials: { clientId: clientCredentials.client.clientId, clientSecret: clientCredentials.clientSecret },
        total: (await listAll(store)).length,
      };
    } catch (err) {
      // Another instance won the insert: report its integrations, as a later start would.
      if (!(err instanceof ClientExistsError)) throw err;
    }
  }
  const existing = await listAll(store);
  const code = findDemo(existing, DEMO_CODE_CLIENT_NAME);
  // Registered by a start on another port: this start's callback address is added, so the printed link works.
  if (code) await ensureDemoRedirectUri(store, code.clientId, redirectUri);
  return {
    created: false,
    code,
    clientCredentials: findDemo(existing, DEMO_CC_CLIENT_NAME),
    total: existing.length,
  };
}

/** Every integration; the demo needs a store with the administration tier (every built-in store has it). */
async function listAll(store: Store): Promise<readonly OAuthClient[]> {
  if (!store.clients.listClients) throw new TypeError('the example app needs a store with clients.listClients');
  return store.clients.listClients();
}
