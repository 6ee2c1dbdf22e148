// Registers an integration exactly as SPEC describes one: a flow and, for the code flow, a redirect URI; no scopes.
import { registerClient } from '../../src/clients/register-client.js';
import type { Store } from '../../src/stores/contract.js';
import { REDIRECT_URI, type TestClient } from './app.js';

/**
 * What `oauth-admin clients create --name X --flow FLOW [--redirect-uri …]` makes (no `--scope`): its tokens
 * carry no scope, and its token responses SPEC's fields only (SPEC §2, §4.3–4.5).
 */
export async function registerSpecClient(store: Store, flow: 'authorization_code' | 'client_credentials'): Promise<TestClient> {
  const { client, clientSecret } = await registerClient(store, {
    name: 'SPEC integration', flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [],
  });
  return { clientId: client.clientId, clientSecret };
}
