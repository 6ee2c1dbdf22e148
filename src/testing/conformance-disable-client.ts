// Conformance rules for the optional ClientStore.disableClient: one atomic step that says whether it disabled.
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { DisableClientOutcome, Store } from '../stores/contract.js';
import type { ConformanceRule, RuleContext } from './conformance-types.js';
import { buildClient } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { administration } from './conformance-parts.js';
import { RACERS } from './conformance-races.js';
import { describeRound, forEachRound, race } from './interleave.js';

/** disableClient is optional in every tier (stores written before it lack it): its rules need it. */
const NEEDS = ['store.clients.createClient', 'store.clients.updateClient', 'store.clients.disableClient'] as const;

function disableOf(store: Store): (clientId: string) => Promise<DisableClientOutcome | null> {
  const { clients } = administration(store);
  return (clientId) => clients.disableClient!(clientId);
}

/**
 * Races RACERS disables of one enabled integration, the first through `first`, the others through `others`, in every
 * interleaving, and checks that exactly one reports having disabled it: the admin API's `client.disabled` is then
 * published once however many instances (or retried `oauth-admin clients disable`) run at once.
 */
async function raceDisables(context: RuleContext, first: Store, others: Store, across: string): Promise<void> {
  await forEachRound(context.rounds, async (round, schedule) => {
    const where = describeRound(round, schedule);
    const { client } = buildClient({ clientId: freshId('client') });
    await administration(first).clients.createClient(client);
    const [one, rest] = await race(
      () => disableOf(first)(client.clientId),
      () => Promise.all(Array.from({ length: RACERS - 1 }, () => disableOf(others)(client.clientId))),
      schedule,
    );
    const outcomes = [one, ...rest];
    const won = outcomes.filter((outcome) => outcome === 'disabled').length;
    assert.equal(won, 1, `${where}: ${won} of ${outcomes.length} disables found the integration enabled (${outcomes.join(', ')}); ${across}`);
    assert.ok(outcomes.every((outcome) => outcome === 'disabled' || outcome === 'already_disabled'), `${where}: ${outcomes.join(', ')}`);
    assert.equal((await first.clients.findClient(client.clientId))?.disabled, true, where);
  });
}

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
    run: (context) => raceDisables(context, context.store, context.store,
      'the check of the flag and its write must be one statement, transaction or script'),
  },
  {
    tier: 'administration',
    needs: NEEDS,
    needsPeer: true,
    name: "across instances (openPeer): of N concurrent disableClient calls through two stores on one backend exactly one resolves 'disabled', in every interleaving",
    async run(context) {
      if (!context.withPeer) throw new TypeError('the rule needs openPeer');
      await context.withPeer((peer) => raceDisables(context, context.store, peer,
        'the store is atomic within one process only: put the check of the flag and its write in one transaction or script on the backend'));
    },
  },
];
