// Rotations of one integration at the same time: a leak's rotation is never undone by a planned one running meanwhile.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { rotateClientSecretWithGrace } from '../../src/clients/rotate-client-secret.js';
import { ConcurrentRotationError } from '../../src/clients/client-errors.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import type { CompleteStore, OAuthClient } from '../../src/stores/contract.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

/** A store whose next `findClient` answers, then runs `meanwhile` before the caller sees the answer. */
function interleaved(inner: CompleteStore, meanwhile: () => Promise<void>, times = 1): CompleteStore {
  let left = times;
  return {
    ...inner,
    clients: {
      ...inner.clients,
      async findClient(clientId: string): Promise<OAuthClient | null> {
        const found = await inner.clients.findClient(clientId);
        if (left > 0) {
          left -= 1;
          await meanwhile();
        }
        return found;
      },
    },
  };
}

async function registered(store: CompleteStore): Promise<{ clientId: string; clientSecret: string }> {
  const { client, clientSecret } = await registerClient(store, { name: 'Partner sync', flow: 'client_credentials' });
  return { clientId: client.clientId, clientSecret };
}

describe('rotate-secret with a grace period, while a rotation for a leak runs (RFC 6749 §2.3.1, §10.1)', () => {
  it('the secret the leak rotation stopped never comes back as the previous one; the leak rotation\'s secret is the one in its grace period', async () => {
    const inner = createMemoryStore();
    const { clientId, clientSecret: leaked } = await registered(inner);
    let leakRotation = '';
    // The planned rotation reads the integration; the leak rotation runs to its end before the planned one writes.
    const store = interleaved(inner, async () => {
      leakRotation = (await rotateClientSecretWithGrace(inner, clientId)).clientSecret;
    });
    const planned = await rotateClientSecretWithGrace(store, clientId, { gracePeriodSeconds: 86_400 });
    const stored = (await inner.clients.findClient(clientId))!;
    expect(stored.clientSecretHash).toBe(hashSecret(planned.clientSecret));
    expect(stored.previousClientSecretHash, 'the leaked secret is not the previous one').not.toBe(hashSecret(leaked));
    expect(stored.previousClientSecretHash, "the leak rotation's secret works through the grace period").toBe(hashSecret(leakRotation));
  });

  it('when the store fails right after a leak rotation overtook it, the stopped secret is not left as the previous one', async () => {
    const inner = createMemoryStore();
    const { clientId, clientSecret: leaked } = await registered(inner);
    let reads = 0;
    const store: CompleteStore = {
      ...inner,
      clients: {
        ...inner.clients,
        async findClient(id: string): Promise<OAuthClient | null> {
          reads += 1;
          if (reads === 2) throw new StoreUnavailableError('the store went away');
          const found = await inner.clients.findClient(id);
          if (reads === 1) await rotateClientSecretWithGrace(inner, clientId);
          return found;
        },
      },
    };
    await expect(rotateClientSecretWithGrace(store, clientId, { gracePeriodSeconds: 30 * 86_400 })).rejects.toBeInstanceOf(StoreUnavailableError);
    const stored = (await inner.clients.findClient(clientId))!;
    expect(stored.previousClientSecretHash ?? null, 'the leaked secret does not authenticate for 30 days').not.toBe(hashSecret(leaked));
  });

  it('when the secret keeps changing under it, it gives up with ConcurrentRotationError and keeps no previous secret', async () => {
    const inner = createMemoryStore();
    const { clientId } = await registered(inner);
    const store = interleaved(inner, async () => { await rotateClientSecretWithGrace(inner, clientId); }, 100);
    await expect(rotateClientSecretWithGrace(store, clientId, { gracePeriodSeconds: 60 })).rejects.toBeInstanceOf(ConcurrentRotationError);
    const stored = (await inner.clients.findClient(clientId))!;
    expect(stored.previousClientSecretHash ?? null).toBeNull();
  });
});
