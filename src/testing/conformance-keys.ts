// Conformance rules for signing keys (store.keys): round trip, order, no replace, insert-if-none, exact kids, delete.
import assert from 'node:assert/strict';
import type { Store } from '../stores/contract.js';
import type { ConformanceRule, RuleContext } from './conformance-types.js';
import { buildKey, secondsFromNow } from './conformance-fixtures.js';
import { freshId, longestId, nearTwins } from './conformance-ids.js';
import { keysOf } from './conformance-parts.js';
import { acrossInstances, RACERS } from './conformance-races.js';
import { describeRound, forEachRound, race } from './interleave.js';

/** The optional delete, with the tier's own methods (`needs` replaces the tier check). */
const DELETE_NEEDS = ['store.keys.listSigningKeys', 'store.keys.saveSigningKey', 'store.keys.deleteSigningKey'] as const;

/**
 * Races RACERS deletes of one kid, the first through `first`, the others through `others`, in every interleaving of
 * the sweep: exactly one resolves true and the key is gone. A delete that checks the kid in one round trip and deletes
 * it in the next has each of two overlapping calls report the deletion (the key ring then counts a leaked key's
 * removal twice); one atomic only because its own process serialises its calls passes through one store only.
 * @see RFC 9068 §4, RFC 9700 §4.14 (a leaked key is deleted once, everywhere).
 */
async function raceDeletes(context: RuleContext, first: Store, others: Store, across: string): Promise<void> {
  const keys = keysOf(first);
  const otherKeys = keysOf(others);
  await forEachRound(context.rounds, async (round, schedule) => {
    const where = describeRound(round, schedule);
    const key = buildKey();
    await keys.saveSigningKey(key);
    const [one, rest] = await race(
      () => keys.deleteSigningKey!(key.kid),
      () => Promise.all(Array.from({ length: RACERS - 1 }, () => otherKeys.deleteSigningKey!(key.kid))),
      schedule,
    );
    const results = [one, ...rest];
    assert.equal(results.filter((r) => r === true).length, 1, `${where}: deletes resolved ${JSON.stringify(results)}; ${across}`);
    assert.deepEqual(await keys.listSigningKeys(), [], `${where}: the key is still listed after ${RACERS} deletes`);
  });
}

/**
 * The SigningKeyStore rules (signingKeys tier). A store without `store.keys` skips them: it then simply
 * cannot back JWT access tokens with package-generated keys. (The concurrent `onlyIfNone` rule is in
 * conformance-races.)
 * @see RFC 9068 §4 (keys that verify access tokens), RFC 7517 §5 (the JWK Set they are published in).
 */
export const signingKeyRules: readonly ConformanceRule[] = [
  {
    tier: 'signingKeys',
    name: 'listSigningKeys resolves an empty array on an empty store',
    async run({ store }) {
      assert.deepEqual(await keysOf(store).listSigningKeys(), []);
    },
  },
  {
    tier: 'signingKeys',
    name: 'saveSigningKey resolves true, and listSigningKeys round-trips every field with createdAt as a Date',
    async run({ store }) {
      const keys = keysOf(store);
      const key = buildKey();
      assert.equal(await keys.saveSigningKey(key), true);
      const listed = await keys.listSigningKeys();
      assert.deepEqual(listed, [key]);
      assert.ok(listed[0]?.createdAt instanceof Date, 'createdAt must be a Date');
      assert.equal(listed[0].createdAt.getTime(), key.createdAt.getTime());
    },
  },
  {
    tier: 'signingKeys',
    name: 'every algorithm name round-trips (ES256, RS256, EdDSA)',
    async run({ store }) {
      const keys = keysOf(store);
      const saved = (['ES256', 'RS256', 'EdDSA'] as const).map((algorithm, i) => buildKey({ algorithm, createdAt: secondsFromNow(-30 + i) }));
      for (const key of saved) await keys.saveSigningKey(key);
      assert.deepEqual((await keys.listSigningKeys()).map((key) => key.algorithm), ['ES256', 'RS256', 'EdDSA']);
    },
  },
  {
    tier: 'signingKeys',
    name: "listSigningKeys orders by createdAt, then kid in binary order ('B' before 'a')",
    async run({ store }) {
      const keys = keysOf(store);
      const tie = secondsFromNow(-100);
      const suffix = freshId('').slice(1);
      const newest = buildKey({ createdAt: secondsFromNow(-10) });
      const oldest = buildKey({ createdAt: secondsFromNow(-1000) });
      const [A, B, a, b] = ['A', 'B', 'a', 'b'].map((p) => buildKey({ kid: `${p}${suffix}`, createdAt: tie }));
      for (const key of [newest, b, a, oldest, B, A]) await keys.saveSigningKey(key!);
      assert.deepEqual((await keys.listSigningKeys()).map((key) => key.kid), [oldest, A, B, a, b, newest].map((key) => key!.kid));
    },
  },
  {
    tier: 'signingKeys',
    name: 'saveSigningKey never replaces: the same kid again resolves false and keeps the first record',
    async run({ store }) {
      const keys = keysOf(store);
      const first = buildKey();
      await keys.saveSigningKey(first);
      assert.equal(await keys.saveSigningKey(buildKey({ kid: first.kid, createdAt: secondsFromNow(0) })), false);
      assert.deepEqual(await keys.listSigningKeys(), [first]);
    },
  },
  {
    tier: 'signingKeys',
    name: 'onlyIfNone inserts into an empty store and is refused (false, nothing written) once a key exists',
    async run({ store }) {
      const keys = keysOf(store);
      const first = buildKey();
      assert.equal(await keys.saveSigningKey(first, { onlyIfNone: true }), true);
      assert.equal(await keys.saveSigningKey(buildKey(), { onlyIfNone: true }), false);
      assert.deepEqual(await keys.listSigningKeys(), [first]);
      // A plain save (rotation) still inserts beside it.
      assert.equal(await keys.saveSigningKey(buildKey({ createdAt: secondsFromNow(0) })), true);
      assert.equal((await keys.listSigningKeys()).length, 2);
    },
  },
  {
    tier: 'signingKeys',
    name: 'kids compare exactly: kids differing only in case or by a trailing space are other keys',
    async run({ store }) {
      const keys = keysOf(store);
      const key = buildKey({ kid: freshId('Kid') });
      await keys.saveSigningKey(key);
      const twins = nearTwins(key.kid).map((kid) => buildKey({ kid, createdAt: key.createdAt }));
      for (const twin of twins) assert.equal(await keys.saveSigningKey(twin), true, `${JSON.stringify(twin.kid)} was taken for ${JSON.stringify(key.kid)}`);
      const listed = await keys.listSigningKeys();
      assert.deepEqual(new Set(listed.map((k) => k.kid)), new Set([key.kid, ...twins.map((t) => t.kid)]));
      for (const k of [key, ...twins]) assert.deepEqual(listed.find((l) => l.kid === k.kid), k);
    },
  },
  {
    tier: 'signingKeys',
    name: 'a kid of STORE_POLICY.maxIdLength characters round-trips',
    async run({ store }) {
      const keys = keysOf(store);
      const key = buildKey({ kid: longestId('Kid') });
      assert.equal(await keys.saveSigningKey(key), true);
      assert.deepEqual(await keys.listSigningKeys(), [key]);
    },
  },
  {
    tier: 'signingKeys',
    needs: DELETE_NEEDS,
    name: 'deleteSigningKey deletes exactly the kid given (true), near twins stay, and a second delete resolves false',
    async run({ store }) {
      const keys = keysOf(store);
      const key = buildKey({ kid: freshId('Kid') });
      const twins = nearTwins(key.kid).map((kid) => buildKey({ kid, createdAt: key.createdAt }));
      for (const k of [key, ...twins]) await keys.saveSigningKey(k);
      assert.equal(await keys.deleteSigningKey!(key.kid), true);
      assert.equal(await keys.deleteSigningKey!(key.kid), false, 'a second delete of one kid must resolve false');
      assert.equal(await keys.deleteSigningKey!(freshId('Kid')), false, 'deleting a kid never saved must resolve false');
      assert.deepEqual(new Set((await keys.listSigningKeys()).map((k) => k.kid)), new Set(twins.map((t) => t.kid)));
    },
  },
  {
    tier: 'signingKeys',
    needs: DELETE_NEEDS,
    name: 'once every key is deleted, onlyIfNone inserts again (a first start after the last key was deleted as leaked)',
    async run({ store }) {
      const keys = keysOf(store);
      const first = buildKey();
      assert.equal(await keys.saveSigningKey(first, { onlyIfNone: true }), true);
      assert.equal(await keys.deleteSigningKey!(first.kid), true);
      assert.deepEqual(await keys.listSigningKeys(), []);
      const next = buildKey({ createdAt: secondsFromNow(0) });
      assert.equal(await keys.saveSigningKey(next, { onlyIfNone: true }), true);
      assert.deepEqual(await keys.listSigningKeys(), [next]);
    },
  },
  {
    tier: 'signingKeys',
    needs: DELETE_NEEDS,
    name: 'of 4 concurrent deletes of one kid, exactly one resolves true, in every interleaving',
    run: (context) => raceDeletes(context, context.store, context.store, 'the check and the delete must be one statement or script'),
  },
  {
    tier: 'signingKeys',
    needs: DELETE_NEEDS,
    needsPeer: true,
    name: 'across instances (openPeer): of 4 concurrent deletes of one kid through two stores on one backend exactly one resolves true, in every interleaving',
    async run(context) {
      if (!context.withPeer) throw new TypeError('the rule needs openPeer');
      await context.withPeer((peer) => raceDeletes(context, context.store, peer,
        acrossInstances('of 4 concurrent deletes of one kid', 'Check and delete in one statement or script on the backend '
        + '(DELETE … RETURNING, the row count of the DELETE, HDEL\'s answer).')));
    },
  },
];
