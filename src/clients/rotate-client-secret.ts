// Replaces an integration's secret: at once (revoking what the old one obtained), or after a grace period.
import type { OAuthClient, Store } from '../stores/contract.js';
import { createRandomToken } from '../crypto/random-token.js';
import { hashSecret } from '../crypto/hash-secret.js';
import { requireAdministration } from '../stores/check-store.js';
import { ConcurrentRotationError, GracePeriodRunningError, RevocationIncompleteError, StoreCapabilityError, UnknownClientError } from './client-errors.js';

/** Reads and writes of the previous secret tried while other rotations keep changing the secret. */
const MAX_ATTEMPTS = 5;

/** The longest grace period a rotation may give the old secret: 30 days. */
export const MAX_SECRET_GRACE_SECONDS = 30 * 24 * 60 * 60;

/** Options of `rotateClientSecretWithGrace`. */
export interface RotateSecretOptions {
  /**
   * Seconds the old secret keeps authenticating, 1 to `MAX_SECRET_GRACE_SECONDS` (a planned rotation: deploy
   * the new secret, then let the old one lapse). Absent or 0: it stops at once and every token is revoked.
   */
  readonly gracePeriodSeconds?: number;
}

/** What a rotation did. The new secret exists only here: the store keeps its hash. */
export interface RotatedSecret {
  readonly clientSecret: string;
  /** Until when the old secret still authenticates; `null` when it stopped at once. */
  readonly previousSecretValidUntil: Date | null;
  /** Whether every token and code of the integration was revoked (only without a grace period). */
  readonly tokensRevoked: boolean;
}

function checkGrace(seconds: number | undefined): number {
  if (seconds === undefined) return 0;
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_SECRET_GRACE_SECONDS) {
    throw new TypeError(`gracePeriodSeconds must be a whole number of seconds from 0 to ${MAX_SECRET_GRACE_SECONDS} (30 days)`);
  }
  return seconds;
}

/**
 * Replaces an integration's secret.
 * - Without a grace period (the default) the old secret stops at once and every token and code issued
 *   before (or while) the rotation runs is revoked: an unplanned rotation means the secret may have leaked,
 *   and what was obtained with it must not outlive it. A grace period still running from an earlier
 *   rotation ends too.
 * - With one, the old secret keeps authenticating until `previousSecretValidUntil` and no token is revoked:
 *   a planned rotation, where the integration's operator deploys the new secret before the old one lapses.
 *   The old hash is written first, on its own, and read back: a store that does not keep it (one written
 *   for contract v1) is refused with `StoreCapabilityError` before the secret changes, never silently
 *   cutting off the old secret. The secret field is then written on its own, so a concurrent disable stays.
 * - With one while an earlier rotation's grace period still runs, nothing changes: `GracePeriodRunningError` (the
 *   store keeps one previous secret, so the first old secret would stop before the date it was given).
 * @throws UnknownClientError, StoreCapabilityError, GracePeriodRunningError, TypeError (a bad grace period),
 * RevocationIncompleteError (the secret changed, the revocation failed: the new secret is in the error).
 * @see RFC 6749 §2.3.1 (client password), §10.1; RFC 6819 §5.2.3.7; RFC 7009 §2.1.
 */
export async function rotateClientSecretWithGrace(
  store: Store,
  clientId: string,
  options: RotateSecretOptions = {},
): Promise<RotatedSecret> {
  const grace = checkGrace(options.gracePeriodSeconds);
  const admin = requireAdministration(store, 'rotateClientSecret');
  const clientSecret = createRandomToken();
  if (grace === 0) {
    const changes = { clientSecretHash: hashSecret(clientSecret), previousClientSecretHash: null, previousClientSecretExpiresAt: null };
    if (!(await admin.clients.updateClient(clientId, changes))) throw new UnknownClientError(clientId);
    // The secret changed first, so nothing the old one obtains after the revocation's moment survives; a failed
    // revocation must then still hand the new secret over, which exists nowhere else.
    try {
      await admin.tokens.revokeClientTokens(clientId);
    } catch (error) {
      throw new RevocationIncompleteError(clientId, clientSecret, error);
    }
    return { clientSecret, previousSecretValidUntil: null, tokensRevoked: true };
  }
  const validUntil = new Date(Date.now() + grace * 1000);
  let current: OAuthClient | null = null;
  let kept: OAuthClient | null = null;
  // The hash kept as previous must be the secret's hash at the moment it is written: one read before, then changed
  // by a rotation running meanwhile (a leak's, which ended every grace period), would bring the secret that
  // rotation stopped back for the whole grace period. The write answers the record after it: if the secret is
  // no longer the one read, the read is taken again and the previous hash written again, over the stale one.
  const noPrevious = { previousClientSecretHash: null, previousClientSecretExpiresAt: null };
  // True from a write that kept a hash the secret no longer had until that hash is taken out again.
  let stale = false;
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      current = await admin.clients.findClient(clientId);
      if (!current) throw new UnknownClientError(clientId);
      // The store keeps one previous secret: this one's would replace a previous one still promised to work.
      const running = current.previousClientSecretExpiresAt;
      if (running !== undefined && running.getTime() > Date.now()) throw new GracePeriodRunningError(clientId, running);
      kept = await admin.clients.updateClient(clientId, {
        previousClientSecretHash: current.clientSecretHash,
        previousClientSecretExpiresAt: validUntil,
      });
      if (!kept) throw new UnknownClientError(clientId);
      if (kept.clientSecretHash === current.clientSecretHash) break;
      // Taken out at once, before anything else can fail: until then a stopped secret authenticates.
      stale = true;
      await admin.clients.updateClient(clientId, noPrevious);
      stale = false;
    }
  } catch (error) {
    if (!stale) throw error;
    // Once more, whatever failed; if this fails too, say what may still work.
    const cleared = await admin.clients.updateClient(clientId, noPrevious).then(() => true, () => false);
    if (cleared) throw error;
    throw new Error(
      `rotating the secret of ${JSON.stringify(clientId)} failed while another rotation changed it, and the previous secret it kept may be one that ` +
        'rotation stopped: rotate again without a grace period (oauth-admin clients rotate-secret ID)',
      { cause: error },
    );
  }
  if (current === null || kept === null) throw new UnknownClientError(clientId);
  // Still changing under it after every try: its previous hash is already out, and none is kept.
  if (kept.clientSecretHash !== current.clientSecretHash) throw new ConcurrentRotationError(clientId);
  if (kept.previousClientSecretHash !== current.clientSecretHash) {
    throw new StoreCapabilityError(
      'this store does not keep a previous client secret (a store written for contract v1), so the old secret ' +
        'could not keep working: nothing was changed; rotate without a grace period, or upgrade the store',
    );
  }
  if (!(await admin.clients.updateClient(clientId, { clientSecretHash: hashSecret(clientSecret) }))) {
    throw new UnknownClientError(clientId);
  }
  return { clientSecret, previousSecretValidUntil: validUntil, tokensRevoked: false };
}

/**
 * Replaces an integration's secret at once and revokes every token and code obtained before: the behaviour
 * of `rotateClientSecretWithGrace` without a grace period, kept for callers of the first release.
 * @returns the new secret, or `null` for an unknown client_id.
 * @see RFC 6749 §2.3.1 (client password), §10.1; RFC 7009 §2.1.
 */
export async function rotateClientSecret(store: Store, clientId: string): Promise<string | null> {
  try {
    return (await rotateClientSecretWithGrace(store, clientId)).clientSecret;
  } catch (error) {
    if (error instanceof UnknownClientError) return null;
    throw error;
  }
}
