// Every start makes sure the demo integration accepts this start's callback address, whatever PORT it listens on.
import type { Store } from 'express-oauth-router';

/**
 * How many callback addresses the demo integration keeps, newest last. Older ones stay so that instances
 * listening on other ports at the same time (one store, several PORTs) keep working; the cap keeps a
 * long-lived store from collecting every port ever tried.
 */
export const MAX_DEMO_REDIRECT_URIS = 10;
// Two instances appending at the same moment can overwrite each other (updateClient writes the whole list);
// each re-reads after writing and tries again, a few times at most.
const ATTEMPTS = 5;

/**
 * Adds `redirectUri` to the demo integration's registered redirect URIs unless it is there already. Matching
 * stays exact (RFC 6749 §3.1.2.3, RFC 9700 §2.1): the address is registered, not a pattern. Every address is
 * `http://localhost:PORT/demo/callback`, a loopback address on this machine (RFC 8252 §7.3 lets loopback
 * redirect URIs take any port).
 * @returns whether the address is registered now.
 */
export async function ensureDemoRedirectUri(store: Store, clientId: string, redirectUri: string): Promise<boolean> {
  const update = store.clients.updateClient;
  if (!update) throw new TypeError('the example app needs a store with clients.updateClient');
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const client = await store.clients.findClient(clientId);
    if (!client) return false;
    if (client.redirectUris.includes(redirectUri)) return true;
    await update.call(store.clients, clientId, { redirectUris: [...client.redirectUris, redirectUri].slice(-MAX_DEMO_REDIRECT_URIS) });
  }
  return (await store.clients.findClient(clientId))?.redirectUris.includes(redirectUri) ?? false;
}
