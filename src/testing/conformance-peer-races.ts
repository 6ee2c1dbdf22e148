// Race rules across instances: each atomic operation raced through the store and a peer on its backend (openPeer).
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { AuthorizationCodeRecord, ConsumeResult, RateLimitCount, Store, TokenRecord } from '../stores/contract.js';
import type { ConformanceRule, RuleContext } from './conformance-types.js';
import { buildClient, buildCode, buildKey, buildToken } from './conformance-fixtures.js';
import { assertReplayed } from './conformance-codes.js';
import { freshId } from './conformance-ids.js';
import { administration, keysOf, rateLimitsOf, revokeClientTokensOf } from './conformance-parts.js';
import { acrossInstances, CROWD, FRESH_STORE_ROUND_DIVISOR, RACERS } from './conformance-races.js';
import { WINDOW_MS } from './conformance-rate-limits.js';
import { raceSaveAgainst, tokensOfRound } from './conformance-token-races.js';
import { describeRound, forEachRound, race, RACE_SCHEDULES, scheduleOfRound } from './interleave.js';

/** What to do when a race fails across instances but passes through one store. */
const ON_THE_BACKEND = 'Put the check and the write in one statement, transaction or script on the backend.';

/** Runs `use` with a peer of the rule's store; the runner skips `needsPeer` rules without `openPeer`. */
function withPeerOf<T>(context: RuleContext, use: (peer: Store) => Promise<T>, of?: Store): Promise<T> {
  if (!context.withPeer) throw new TypeError('the rule needs openPeer');
  return context.withPeer(use, of);
}

/** `raceSaveAgainst` with the save through the rule's store and the revocation through its peer. */
function raceSaveAgainstPeer(
  context: RuleContext,
  tokensOf: Parameters<typeof raceSaveAgainst>[2],
  revoke: (peer: Store, access: TokenRecord) => Promise<unknown>,
): Promise<void> {
  return withPeerOf(context, (peer) => raceSaveAgainst(context.store, context.rounds, tokensOf, (access) => revoke(peer, access)));
}

/** Starts `count` calls at once, alternating between two stores: `call(i % 2 === 0 ? a : b)`. */
function split<T>(count: number, a: Store, b: Store, call: (store: Store) => Promise<T>): () => Promise<T[]> {
  return () => Promise.all(Array.from({ length: count }, (_, i) => call(i % 2 === 0 ? a : b)));
}

/**
 * The race rules again, with the racers on two stores of one backend, as two instances of an app (or an
 * instance and `oauth-admin`) run them. A store that is atomic only because its own calls are serialised in
 * process passes every race through one store object and fails these every run.
 * @see RFC 6749 §4.1.2 (single use), RFC 7009 §2.1 (revocation takes effect at once), RFC 9068 §4.
 */
export const peerRaceRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    needsPeer: true,
    name: 'across instances (openPeer): of N concurrent consumeCode calls through two stores on one backend exactly one is consumed, in every interleaving',
    async run(context) {
      const { store, rounds } = context;
      await withPeerOf(context, async (peer) => {
        await forEachRound(rounds, async (round, schedule) => {
          const where = describeRound(round, schedule);
          const code = buildCode();
          await store.codes.saveCode(code);
          const consume = (through: Store) => through.codes.consumeCode(code.codeHash);
          let results: ConsumeResult<AuthorizationCodeRecord>[];
          if (round === 0) results = await split(CROWD, store, peer, consume)();
          else {
            const [one, others] = await race(() => consume(store), split(RACERS - 1, peer, peer, consume), schedule);
            results = [one, ...others];
          }
          const consumed = results.filter((r) => r.kind === 'consumed');
          assert.equal(consumed.length, 1, `${where}: ${consumed.length} of ${results.length} calls consumed the code; ${acrossInstances('of N concurrent consumeCode calls', ON_THE_BACKEND)}`);
          assert.deepEqual(consumed[0], { kind: 'consumed', record: code }, where);
          for (const result of results.filter((r) => r.kind !== 'consumed')) assertReplayed(result, code, where);
        });
      });
    },
  },
  {
    tier: 'required',
    needsPeer: true,
    name: 'across instances (openPeer): saveTokens racing revokeGrant made through another store: no token of the grant can be found, in every interleaving',
    async run(context) {
      await raceSaveAgainstPeer(
        context,
        (round) => tokensOfRound(round, { clientId: freshId('client'), userId: 'alice' }),
        (peer, access) => peer.tokens.revokeGrant(access.grantId),
      );
    },
  },
  {
    tier: 'administration',
    needsPeer: true,
    needs: ['store.tokens.revokeClientTokens'],
    name: 'across instances (openPeer): saveTokens racing revokeClientTokens(clientId) made through another store: no token can be found, in every interleaving',
    async run(context) {
      await raceSaveAgainstPeer(
        context,
        (round) => round % 4 === 1
          ? { access: buildToken({ clientId: freshId('client'), userId: null }), refresh: null, newGrant: true }
          : tokensOfRound(round, { clientId: freshId('client'), userId: 'alice' }),
        (peer, access) => revokeClientTokensOf(peer)(access.clientId),
      );
    },
  },
  {
    tier: 'administration',
    needsPeer: true,
    needs: ['store.tokens.revokeClientTokens'],
    name: 'across instances (openPeer): saveTokens racing revokeClientTokens(clientId, userId) made through another store: no token can be found, in every interleaving',
    async run(context) {
      await raceSaveAgainstPeer(
        context,
        (round) => tokensOfRound(round, { clientId: freshId('client'), userId: freshId('user') }),
        (peer, access) => revokeClientTokensOf(peer)(access.clientId, access.userId!),
      );
    },
  },
  {
    tier: 'administration',
    needsPeer: true,
    name: 'across instances (openPeer): updateClient disabling racing updateClient rotating the secret through another store: both changes survive, in every interleaving',
    async run(context) {
      const { store, rounds } = context;
      const { clients } = administration(store);
      await withPeerOf(context, async (peer) => {
        const peerClients = administration(peer).clients;
        await forEachRound(rounds, async (round, schedule) => {
          const where = describeRound(round, schedule);
          const { client } = buildClient({ clientId: freshId('client') });
          await clients.createClient(client);
          const rotated = hashSecret(freshId('secret'));
          await race(
            () => clients.updateClient(client.clientId, { disabled: true }),
            () => peerClients.updateClient(client.clientId, { clientSecretHash: rotated }),
            schedule,
          );
          assert.deepEqual(
            await clients.findClient(client.clientId),
            { ...client, disabled: true, clientSecretHash: rotated },
            `${where}: one update undid the other; ${acrossInstances('updateClient disabling racing updateClient rotating the secret', 'Write only the fields given, in one statement on the backend.')}`,
          );
        });
      });
    },
  },
  {
    tier: 'signingKeys',
    needsPeer: true,
    name: 'across instances (openPeer): of N concurrent onlyIfNone saves through two stores on an empty backend exactly one inserts, in every interleaving',
    async run(context) {
      const { rounds, withFreshStore } = context;
      const freshRounds = Math.max(1, Math.ceil(rounds / FRESH_STORE_ROUND_DIVISOR));
      const stride = Math.max(1, Math.floor(RACE_SCHEDULES.length / freshRounds));
      for (let round = 0; round < freshRounds; round++) {
        const schedule = scheduleOfRound(round * stride);
        const where = describeRound(round, schedule);
        await withFreshStore((store) => withPeerOf(context, async (peer) => {
          const [keys, peerKeys] = [keysOf(store), keysOf(peer)];
          // Warm both, as running instances are: a cold pool serialises the racers while it connects.
          await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? keys : peerKeys).listSigningKeys()));
          const candidates = Array.from({ length: RACERS }, () => buildKey());
          const [first, others] = await race(
            () => keys.saveSigningKey(candidates[0]!, { onlyIfNone: true }),
            () => Promise.all(candidates.slice(1).map((key) => peerKeys.saveSigningKey(key, { onlyIfNone: true }))),
            schedule,
          );
          const results = [first, ...others];
          assert.equal(results.filter((r) => r === true).length, 1, `${where}: ${results.filter((r) => r === true).length} saves inserted; ${acrossInstances('of N concurrent onlyIfNone saves', ON_THE_BACKEND)}`);
          assert.deepEqual(await keys.listSigningKeys(), [candidates[results.indexOf(true)]], `${where}: the store holds other keys than the winner`);
        }, store));
      }
    },
  },
  {
    tier: 'rateLimits',
    needsPeer: true,
    name: 'across instances (openPeer): of N concurrent hits on one key through two stores the counts are 1 to N, each exactly once, in every interleaving',
    async run(context) {
      const { store, rounds } = context;
      const counters = rateLimitsOf(store);
      await withPeerOf(context, async (peer) => {
        const peerCounters = rateLimitsOf(peer);
        await forEachRound(rounds, async (round, schedule) => {
          const where = describeRound(round, schedule);
          const key = `eor:test:${freshId('Key')}`;
          const now = new Date();
          const hit = (through: Store) => (through === store ? counters : peerCounters).hit(key, WINDOW_MS, now);
          let results: RateLimitCount[];
          if (round === 0) results = await split(CROWD, store, peer, hit)();
          else {
            const [one, others] = await race(() => hit(store), split(RACERS - 1, peer, peer, hit), schedule);
            results = [one, ...others];
          }
          const counts = results.map((r) => r.count).sort((a, b) => a - b);
          assert.deepEqual(counts, Array.from({ length: results.length }, (_, i) => i + 1), `${where}: counts ${JSON.stringify(counts)}; ${acrossInstances('of N concurrent hits on one key', ON_THE_BACKEND)}`);
        });
      });
    },
  },
];
