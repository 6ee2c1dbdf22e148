// Many client_credentials integrations for bench/integrations.js: made in the server child, known to the load side.
import { createHash } from 'node:crypto';

/** Integration i's client_id. */
export const integrationId = (i) => `bench-int-${i}`;

/** Integration i's secret: 43 base64url characters, as long as a generated one, derived so both sides know it. */
export const integrationSecret = (i) => createHash('sha256').update(`bench-int-secret-${i}`).digest('base64url');

/**
 * Registers integrations 0 … count − 1 (client_credentials, scope bench:read) through the store's own
 * createClient, as registerClient saves them, a few hundred at a time in flight.
 */
export async function seedIntegrations(store, count) {
  const { buildClientRecord, hashSecret } = await import('express-oauth-router');
  for (let lo = 0; lo < count; lo += 500) {
    const saves = [];
    for (let i = lo; i < Math.min(count, lo + 500); i += 1) {
      const record = buildClientRecord({ name: `bench ${i}`, flow: 'client_credentials', allowedScopes: ['bench:read'], clientId: integrationId(i) }, hashSecret(integrationSecret(i)));
      saves.push(store.clients.createClient(record));
    }
    if ((await Promise.all(saves)).some((created) => !created)) throw new Error('seedIntegrations: an integration already existed');
  }
}
