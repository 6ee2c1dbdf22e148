// Race rules for the other atomic operations: single-use codes, field-by-field updates, the first signing key.
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { ConsumeResult, AuthorizationCodeRecord } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildClient, buildCode, buildKey } from './conformance-fixtures.js';
import { assertReplayed } from './conformance-codes.js';
import { freshId } from './conformance-ids.js';
import { administration, keysOf } from './conformance-parts.js';
import { describeRound, forEachRound, race, RACE_SCHEDULES, scheduleOfRound } from './interleave.js';

/** Concurrent callers per round of the N-way races: one starts, the others start together after it. */
export const RACERS = 4;
/** Callers of the opening round of the consume race, all started at once. */
export const CROWD = 20;
/** The race that needs an empty store per round runs `rounds / FRESH_STORE_ROUND_DIVISOR` rounds: stores cost more. @see RFC 9068 §4 */
export const FRESH_STORE_ROUND_DIVISOR = 20;

/**
 * The hint of a race rule across instances (openPeer). Such a failure means "atomic within one process only" only when
 * the same race through one store passes; when that one fails too, its own message names the cause, and blaming an
 * in-process lock the store does not have would send its author looking for the wrong thing.
 * @see RFC 6749 §4.1.2, RFC 7009 §2.1 (one answer across every instance of the app).
 */
export function acrossInstances(race: string, fix: string): string {
  return `if the same race through one store ("${race}") passes, the store is atomic within one process only: a lock, `
    + 'queue or cache in its code does not reach another instance on the same backend; if that rule fails too, fix what '
    + `its message says first. ${fix}`;
}

/** Starts `count` calls of `call` at once and resolves all their results. */
export function together<T>(count: number, call: () => Promise<T>): () => Promise<T[]> {
  return () => Promise.all(Array.from({ length: count }, call));
}

/**
 * The race rules of single use, field updates and the first key. A store with an `await` or a round trip
 * between its check and its write (read-then-mark, read-modify-write, count-then-insert) fails them every run.
 * @see RFC 6749 §4.1.2 ("MUST NOT use the authorization code more than once"), §10.5, RFC 9068 §4.
 */
export const raceRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: `of N concurrent consumeCode calls exactly one is consumed and the rest replayed with the grantId, in every interleaving`,
    async run({ store, rounds }) {
      await forEachRound(rounds, async (round, schedule) => {
        const where = describeRound(round, schedule);
        const code = buildCode();
        await store.codes.saveCode(code);
        const consume = () => store.codes.consumeCode(code.codeHash);
        let results: ConsumeResult<AuthorizationCodeRecord>[];
        if (round === 0) results = await together(CROWD, consume)();
        else {
          const [one, others] = await race(consume, together(RACERS - 1, consume), schedule);
          results = [one, ...others];
        }
        const consumed = results.filter((r) => r.kind === 'consumed');
        assert.equal(
          consumed.length, 1,
          `${where}: ${consumed.length} of ${results.length} calls consumed the code; the check that it is unused and the write ` +
            'that marks it used must be one statement, transaction or script',
        );
        assert.deepEqual(consumed[0], { kind: 'consumed', record: code }, where);
        for (const result of results.filter((r) => r.kind !== 'consumed')) {
          assertReplayed(result, code, where);
        }
        assertReplayed(await consume(), code, `${where}: a later call`);
      });
    },
  },
  {
    tier: 'administration',
    name: 'updateClient disabling racing updateClient rotating the secret: both changes survive, in every interleaving',
    async run({ store, rounds }) {
      const { clients } = administration(store);
      await forEachRound(rounds, async (round, schedule) => {
        const where = describeRound(round, schedule);
        const { client } = buildClient({ clientId: freshId('client') });
        await clients.createClient(client);
        const rotated = hashSecret(freshId('secret'));
        const [afterDisable, afterRotate] = await race(
          () => clients.updateClient(client.clientId, { disabled: true }),
          () => clients.updateClient(client.clientId, { clientSecretHash: rotated }),
          schedule,
        );
        assert.equal(afterDisable?.disabled, true, `${where}: updateClient({ disabled }) resolved a record that is not disabled`);
        assert.equal(afterRotate?.clientSecretHash, rotated, `${where}: updateClient({ clientSecretHash }) resolved the old secret`);
        assert.deepEqual(
          await clients.findClient(client.clientId),
          { ...client, disabled: true, clientSecretHash: rotated },
          `${where}: one update undid the other (a read-modify-write of the whole record?)`,
        );
      });
    },
  },
  {
    tier: 'signingKeys',
    name: 'of N concurrent onlyIfNone saves on an empty store exactly one inserts, in every interleaving (instances converge on one key)',
    async run({ rounds, withFreshStore }) {
      // Each round needs an empty store: stride through the sweep so that few rounds still cover it.
      const freshRounds = Math.max(1, Math.ceil(rounds / FRESH_STORE_ROUND_DIVISOR));
      const stride = Math.max(1, Math.floor(RACE_SCHEDULES.length / freshRounds));
      for (let round = 0; round < freshRounds; round++) {
        const schedule = scheduleOfRound(round * stride);
        const where = describeRound(round, schedule);
        await withFreshStore(async (store) => {
          const keys = keysOf(store);
          // Warm first, as a running server's store is: a cold pool serialises the racers while it opens
          // connections, which hides a non-atomic count-then-insert.
          await Promise.all(Array.from({ length: RACERS }, () => keys.listSigningKeys()));
          const candidates = Array.from({ length: RACERS }, () => buildKey());
          const save = (index: number) => () => keys.saveSigningKey(candidates[index]!, { onlyIfNone: true });
          const [first, others] = await race(save(0), () => Promise.all(candidates.slice(1).map((_, i) => save(i + 1)())), schedule);
          const results = [first, ...others];
          assert.equal(results.filter((r) => r === true).length, 1, `${where}: ${results.filter((r) => r === true).length} saves inserted`);
          assert.ok(results.every((r) => typeof r === 'boolean'), `${where}: saveSigningKey resolved a non-boolean`);
          assert.deepEqual(await keys.listSigningKeys(), [candidates[results.indexOf(true)]], `${where}: the store holds other keys than the winner`);
        });
      }
    },
  },
];
