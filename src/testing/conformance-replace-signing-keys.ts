// Conformance rules for the optional SigningKeyStore.replaceSigningKeys: a leaked-key replacement in one atomic step.
import assert from 'node:assert/strict';
import type { SigningKeyRecord, Store } from '../stores/contract.js';
import type { ConformanceRule, RuleContext } from './conformance-types.js';
import { buildKey, secondsFromNow } from './conformance-fixtures.js';
import { keysOf } from './conformance-parts.js';
import { acrossInstances, RACERS } from './conformance-races.js';
import { describeRound, forEachRound, race } from './interleave.js';

/** replaceSigningKeys is optional in every tier (stores written before it lack it): its rules need it. */
const NEEDS = ['store.keys.listSigningKeys', 'store.keys.saveSigningKey', 'store.keys.replaceSigningKeys'] as const;

/**
 * What a failed replacement race needs, the lock first: a transaction alone is not enough. Under PostgreSQL's default
 * READ COMMITTED, two replacements in their own transactions each delete the keys they saw and each
 * insert their own, so two keys are left; only serialising every replacement with every other one makes it atomic.
 */
const SERIALISE = 'every replacement must be serialised with every other one, and a transaction alone does not do it '
  + '(under PostgreSQL READ COMMITTED two replacements each delete what they saw and each insert their key): take a lock '
  + 'first in the same transaction, e.g. pg_advisory_xact_lock, or SELECT … FOR UPDATE on a row every replacement touches'
  + ', or run the whole replacement as one script (Redis Lua)';

const sorted = (kids: readonly string[]): string[] => [...kids].sort();

/**
 * Races RACERS replacements, the first through `first`, the others through `others`, on keys saved beforehand, in
 * every interleaving, and checks what one atomic step per call leaves: exactly one key, one of the new ones, and
 * every other kid (the keys there before and the new keys of the calls that committed earlier) resolved as deleted by
 * exactly one call. A replacement that lists, then saves, then deletes what it listed leaves two new keys; one that
 * saves, lists, then deletes leaves none.
 * @see RFC 9068 §4, RFC 9700 §4.14 (a leaked key must stop signing everywhere).
 */
async function raceReplacements(context: RuleContext, first: Store, others: Store, across: string): Promise<void> {
  const keys = keysOf(first);
  const otherKeys = keysOf(others);
  await forEachRound(context.rounds, async (round, schedule) => {
    const where = describeRound(round, schedule);
    for (const key of [buildKey({ createdAt: secondsFromNow(-120) }), buildKey()]) await keys.saveSigningKey(key);
    const before = (await keys.listSigningKeys()).map((key) => key.kid);
    const candidates: SigningKeyRecord[] = Array.from({ length: RACERS }, () => buildKey({ createdAt: secondsFromNow(0) }));
    const [one, rest] = await race(
      () => keys.replaceSigningKeys!(candidates[0]!),
      () => Promise.all(candidates.slice(1).map((key) => otherKeys.replaceSigningKeys!(key))),
      schedule,
    );
    const left = await keys.listSigningKeys();
    assert.equal(left.length, 1, `${where}: ${left.length} keys left after ${RACERS} concurrent replacements; ${across}`);
    const survivor = candidates.find((key) => key.kid === left[0]!.kid);
    assert.ok(survivor, `${where}: the key left is none of the replacements' new keys`);
    assert.deepEqual(left[0], survivor, `${where}: the key left is not the record saved`);
    const everyOther = [...before, ...candidates.map((key) => key.kid)].filter((kid) => kid !== survivor.kid);
    assert.deepEqual(sorted([one, ...rest].flat()), sorted(everyOther),
      `${where}: every kid but the one left must be resolved as deleted by exactly one replacement; ${across}`);
  });
}

/**
 * The rules of `replaceSigningKeys`, which run only when the store has it.
 * @see RFC 9068 §4, RFC 7517 §5, RFC 9700 §4.10, §4.14.
 */
export const replaceSigningKeysRules: readonly ConformanceRule[] = [
  {
    tier: 'signingKeys',
    needs: NEEDS,
    name: 'replaceSigningKeys inserts the record, deletes every other key and resolves their kids; again with the same kid it keeps the first record and still deletes every other key',
    async run({ store }) {
      const keys = keysOf(store);
      const firstKey = buildKey({ createdAt: secondsFromNow(-300) });
      assert.deepEqual(await keys.replaceSigningKeys!(firstKey), [], 'an empty store: nothing to delete');
      assert.deepEqual(await keys.listSigningKeys(), [firstKey]);
      // Older and newer keys alike go: the caller's view of the store is no part of the call.
      const olds = [buildKey({ createdAt: secondsFromNow(-200) }), buildKey({ createdAt: secondsFromNow(60) })];
      for (const key of olds) await keys.saveSigningKey(key);
      const record = buildKey({ createdAt: secondsFromNow(0) });
      assert.deepEqual(sorted(await keys.replaceSigningKeys!(record)), sorted([firstKey, ...olds].map((key) => key.kid)));
      assert.deepEqual(await keys.listSigningKeys(), [record]);
      // A retry of a call whose answer was lost: nothing left to delete, and the stored record is not replaced.
      assert.deepEqual(await keys.replaceSigningKeys!({ ...record, createdAt: secondsFromNow(30) }), []);
      assert.deepEqual(await keys.listSigningKeys(), [record]);
      // A retry after a key was saved meanwhile (a planned rotation): its kid being stored already is no reason to stop,
      // every other key still goes (a store that answers a known kid with [] at once leaves the newer key beside it).
      const meanwhile = buildKey({ createdAt: secondsFromNow(10) });
      await keys.saveSigningKey(meanwhile);
      assert.deepEqual(await keys.replaceSigningKeys!(record), [meanwhile.kid],
        'a retry with a stored kid must still delete every other key and resolve its kid');
      assert.deepEqual(await keys.listSigningKeys(), [record]);
    },
  },
  {
    tier: 'signingKeys',
    needs: NEEDS,
    name: 'of N concurrent replaceSigningKeys calls exactly one key is left, and every other kid is resolved as deleted once, in every interleaving',
    run: (context) => raceReplacements(context, context.store, context.store, SERIALISE),
  },
  {
    tier: 'signingKeys',
    needs: NEEDS,
    needsPeer: true,
    name: 'across instances (openPeer): of N concurrent replaceSigningKeys calls through two stores on one backend exactly one key is left, in every interleaving',
    async run(context) {
      if (!context.withPeer) throw new TypeError('the rule needs openPeer');
      await context.withPeer((peer) => raceReplacements(context, context.store, peer,
        acrossInstances('of N concurrent replaceSigningKeys calls', SERIALISE)));
    },
  },
];
