// Conformance rules for the optional ClientStore.disableClient: one atomic step that says whether it disabled.
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildClient } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { administration } from './conformance-parts.js';
import { acrossInstances } from './conformance-races.js';
import { raceStatusChange } from './conformance-status-race.js';

/** disableClient is optional in every tier (stores written before it lack it): its rules need it. */
const NEEDS = ['store.clients.createClient', 'store.clients.updateClient', 'store.clients.disableClient'] as const;

/**
 * The rules of `disableClient`, which run only when the store has it.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §2.3.1, RFC 6819 §5.2.3.7 (the previous secret goes with a disable).
 */
export const disableClientRules: readonly ConformanceRule[] = [
  {
    tier: 'administration',
    needs: NEEDS,
    name: "disableClient resolves 'disabled' once, then 'already_disabled', null for an unknown id, and removes the previous secret each time",
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient();
      const { client: other } = buildClient();
      await clients.createClient(client);
      await clients.createClient(other);
      const grace = { previousClientSecretHash: hashSecret(freshId()), previousClientSecretExpiresAt: new Date(Date.now() + 86_400_000) };
      await clients.updateClient(client.clientId, grace);
      assert.equal(await clients.disableClient!(client.clientId), 'disabled');
      assert.deepEqual(await clients.findClient(client.clientId), { ...client, disabled: true }, 'disabled, with no previous secret and nothing else changed');
      // A rotation with a grace period on a disabled integration, then a second disable: the previous secret goes again.
      await clients.updateClient(client.clientId, grace);
      assert.equal(await clients.disableClient!(client.clientId), 'already_disabled');
      assert.deepEqual(await clients.findClient(client.clientId), { ...client, disabled: true });
      assert.equal(await clients.disableClient!(freshId()), null);
      assert.deepEqual(await clients.findClient(other.clientId), other, "another integration's record is untouched");
      await clients.updateClient(client.clientId, { disabled: false });
      assert.equal(await clients.disableClient!(client.clientId), 'disabled', 'enabled again, then disabled: reported again');
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: "of N concurrent disableClient calls on an enabled integration exactly one resolves 'disabled', in every interleaving",
    run: (context) => raceStatusChange(context, 'disableClient', context.store, context.store,
      'the check of the flag and its write must be one statement, transaction or script'),
  },
  {
    tier: 'administration',
    needs: NEEDS,
    needsPeer: true,
    name: "across instances (openPeer): of N concurrent disableClient calls through two stores on one backend exactly one resolves 'disabled', in every interleaving",
    async run(context) {
      if (!context.withPeer) throw new TypeError('the rule needs openPeer');
      await context.withPeer((peer) => raceStatusChange(context, 'disableClient', context.store, peer,
        acrossInstances('of N concurrent disableClient calls', 'Put the check of the flag and its write in one statement, transaction or script on the backend.')));
    },
  },
];
