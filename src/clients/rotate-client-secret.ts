// Replaces an integration's secret and revokes what the old one obtained.
import type { Store } from '../stores/contract.js';
import { createRandomToken } from '../crypto/random-token.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { requireAdministration } from '../stores/check-store.js';

/**
 * Replaces an integration's secret. The old one stops working at once, and every token and code issued
 * before (or while) the rotation runs is revoked: a secret is rotated because it may have leaked, and what
 * was obtained with it must not outlive it. Only the secret field is written (never the whole record), so a
 * concurrent disable cannot be undone.
 * @returns the new secret, or `null` for an unknown client_id.
 * @see RFC 6749 §2.3.1 (client password), §10.1; RFC 7009 §2.1.
 */
export async function rotateClientSecret(store: Store, clientId: string): Promise<string | null> {
  const admin = requireAdministration(store, 'rotateClientSecret');
  const clientSecret = createRandomToken();
  if (!(await admin.clients.updateClient(clientId, { clientSecretHash: hashSecret(clientSecret) }))) return null;
  await admin.tokens.revokeClientTokens(clientId);
  return clientSecret;
}
