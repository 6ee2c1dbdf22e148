// Conformance rules for the optional ClientStore.enableClient: one atomic step that says whether it enabled.
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildClient } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { administration } from './conformance-parts.js';
import { acrossInstances } from './conformance-races.js';
import { raceStatusChange } from './conformance-status-race.js';

/** enableClient is optional in every tier (stores written before it lack it): its rules need it. */
const NEEDS = ['store.clients.createClient', 'store.clients.updateClient', 'store.clients.enableClient'] as const;

/**
 * The rules of `enableClient`, which run only when the store has it.
 * @see RFC 6749 §2.3.1 (client authentication), RFC 7009 §2.1 (nothing revoked comes back).
 */
export const enableClientRules: readonly ConformanceRule[] = [
  {
    tier: 'administration',
    needs: NEEDS,
    name: "enableClient resolves 'enabled' once, then 'already_enabled', null for an unknown id, and writes the flag alone",
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient({ disabled: true });
      const { client: other } = buildClient({ disabled: true });
      await clients.createClient(client);
      await clients.createClient(other);
      // A rotation's grace period on a disabled integration: an enable keeps it (it writes `disabled` only).
      const grace = { previousClientSecretHash: hashSecret(freshId()), previousClientSecretExpiresAt: new Date(Date.now() + 86_400_000) };
      await clients.updateClient(client.clientId, grace);
      assert.equal(await clients.enableClient!(client.clientId), 'enabled');
      assert.deepEqual(await clients.findClient(client.clientId), { ...client, ...grace, disabled: false }, 'enabled, nothing else changed');
      assert.equal(await clients.enableClient!(client.clientId), 'already_enabled');
      assert.deepEqual(await clients.findClient(client.clientId), { ...client, ...grace, disabled: false });
      assert.equal(await clients.enableClient!(freshId()), null);
      assert.deepEqual(await clients.findClient(other.clientId), other, "another integration's record is untouched");
      await clients.updateClient(client.clientId, { disabled: true });
      assert.equal(await clients.enableClient!(client.clientId), 'enabled', 'disabled again, then enabled: reported again');
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: "of N concurrent enableClient calls on a disabled integration exactly one resolves 'enabled', in every interleaving",
    run: (context) => raceStatusChange(context, 'enableClient', context.store, context.store,
      'the check of the flag and its write must be one statement, transaction or script'),
  },
  {
    tier: 'administration',
    needs: NEEDS,
    needsPeer: true,
    name: "across instances (openPeer): of N concurrent enableClient calls through two stores on one backend exactly one resolves 'enabled', in every interleaving",
    async run(context) {
      if (!context.withPeer) throw new TypeError('the rule needs openPeer');
      await context.withPeer((peer) => raceStatusChange(context, 'enableClient', context.store, peer,
        acrossInstances('of N concurrent enableClient calls', 'Put the check of the flag and its write in one statement, transaction or script on the backend.')));
    },
  },
];
