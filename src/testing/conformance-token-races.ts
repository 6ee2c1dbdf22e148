// Race rules for revocations: saveTokens against each one leaves nothing revoked; of concurrent ones, one reports it.
import assert from 'node:assert/strict';
import type { Store, TokenRecord } from '../stores/contract.js';
import type { ConformanceRule, RuleContext } from './conformance-types.js';
import { buildToken, buildTokenPair, findable } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { revokeClientTokensOf } from './conformance-parts.js';
import { acrossInstances, RACERS } from './conformance-races.js';
import { describeRound, forEachRound, race, type RaceSchedule } from './interleave.js';

/** The tokens of one round: a pair with a refresh token on even rounds, a lone access token on odd ones. */
export function tokensOfRound(round: number, overrides: Partial<TokenRecord>): { access: TokenRecord; refresh: TokenRecord | null } {
  return round % 2 === 0 ? buildTokenPair(overrides) : { access: buildToken(overrides), refresh: null };
}

/**
 * Races `saveTokens` (operation A) through `store` against `revoke` (operation B, through `store` or a peer on its
 * backend) round after round through the sweep, and checks after both have settled that neither token of the
 * round can be found.
 */
export async function raceSaveAgainst(
  store: Store,
  rounds: number,
  tokensOf: (round: number) => { access: TokenRecord; refresh: TokenRecord | null; newGrant?: boolean },
  revoke: (access: TokenRecord) => Promise<unknown>,
): Promise<void> {
  await forEachRound(rounds, async (round, schedule) => {
    const { access, refresh, newGrant } = tokensOf(round);
    // Taken before either operation starts: the revocation is recorded at or after it.
    const authorizedAt = new Date();
    const [saved] = await race(
      () => store.tokens.saveTokens(access, refresh, newGrant === true ? { authorizedAt, newGrant } : { authorizedAt }),
      () => revoke(access),
      schedule,
    );
    assert.equal(typeof saved, 'boolean', `${describeRound(round, schedule)}: saveTokens resolved ${String(saved)}`);
    const left = await findable(store, [access], refresh ? [refresh] : []);
    assert.ok(
      left.every((found) => !found),
      `${describeRound(round, schedule)}: a token survived the revocation (saveTokens resolved ${String(saved)}); ` +
        'the save and the revocation must conflict: the save\'s tombstone check and insert in one transaction (or script), and '
        + 'that transaction and the revocation\'s (tombstone, then delete) serialised against each other, e.g. both locking '
        + 'the same per-grant and per-integration rows or advisory locks (under READ COMMITTED a check and an insert in one '
        + 'transaction are not enough by themselves)',
    );
  });
}

/**
 * Races RACERS revocations of one access token, then RACERS of its grant, then RACERS of a grant holding no token, the
 * first through `first`, the others through `others`, in every interleaving of the sweep: of each, no more than one resolves true and not every one
 * false (a store answering nothing passes). Two replays of one code, two RFC 7009 revocations of one token: the
 * router reports the revocation unless the store answers false, so a store that checks in one round trip and writes
 * in the next has two callers report it; one atomic only because its own process serialises its calls passes
 * through one store only.
 * Each round first races one `revokeGrant` through `first` against a refresh through `others` (`saveTokens` of a new
 * access token of the grant, no refresh token: SPEC §4.5) while the grant still holds its access and refresh tokens,
 * as a replayed code or a revoked refresh token races a client refreshing: afterwards no token of the grant can be
 * found, and the revocation, the grant's first, did not resolve false. A `revokeGrant` that deletes the grant's tokens
 * in one round trip and records its tombstone in the next lets the refresh land between them; the N-way races alone
 * never show it (of concurrent revocations one deletes, and the answer is decided with the tombstone), nor does a save
 * racing the revocation of a grant that holds nothing yet.
 * @see RFC 7009 §2.1, RFC 6749 §4.1.2 (a replayed code revokes the grant: once), §6 (the refresh).
 */
async function raceRevocations(context: RuleContext, first: Store, others: Store, across: string): Promise<void> {
  await forEachRound(context.rounds, async (round, schedule) => {
    const where = describeRound(round, schedule);
    await raceRefreshAgainstRevokeGrant(first, others, where, schedule, across);
    const { access, refresh } = buildTokenPair({ clientId: freshId('client'), userId: 'alice' });
    assert.equal(await first.tokens.saveTokens(access, refresh, { authorizedAt: new Date() }), true, `${where}: saveTokens`);
    // A grant holding no token too: replays of a code whose exchange saved nothing (refused, or not yet committed).
    const unused = freshId('grant');
    for (const [what, revoke] of [
      ['revokeAccessToken', (through: Store) => through.tokens.revokeAccessToken(access.tokenHash)],
      ['revokeGrant', (through: Store) => through.tokens.revokeGrant(access.grantId)],
      ['revokeGrant of a grant holding no token', (through: Store) => through.tokens.revokeGrant(unused)],
    ] as const) {
      const [one, rest] = await race(
        () => revoke(first),
        () => Promise.all(Array.from({ length: RACERS - 1 }, () => revoke(others))),
        schedule,
      );
      const answers = [one, ...rest];
      const wins = answers.filter((answer) => answer === true).length;
      assert.ok(wins <= 1, `${where}: ${what}: ${wins} of ${RACERS} concurrent calls resolved true (${JSON.stringify(answers)}); ${across}`);
      assert.ok(answers.some((answer) => answer !== false), `${where}: ${what}: every one of ${RACERS} concurrent calls resolved false`);
    }
  });
}

/**
 * One round of `revokeGrant` (through `first`) racing a refresh of its grant (through `others`), the grant holding a
 * live access token and refresh token: see `raceRevocations`.
 * @see RFC 7009 §2.1 (revocation takes effect at once), RFC 6749 §6.
 */
async function raceRefreshAgainstRevokeGrant(first: Store, others: Store, where: string, schedule: RaceSchedule, across: string): Promise<void> {
  const { access, refresh } = buildTokenPair({ clientId: freshId('client'), userId: 'alice' });
  assert.equal(await first.tokens.saveTokens(access, refresh, { authorizedAt: new Date() }), true, `${where}: saveTokens`);
  const refreshed = buildToken({ grantId: access.grantId, clientId: access.clientId, userId: access.userId });
  // Taken before the refresh starts, as the token request takes it.
  const authorizedAt = new Date();
  const [revoked, saved] = await race(
    () => first.tokens.revokeGrant(access.grantId),
    () => others.tokens.saveTokens(refreshed, null, { authorizedAt }),
    schedule,
  );
  assert.equal(typeof saved, 'boolean', `${where}: the refresh's saveTokens resolved ${String(saved)}`);
  assert.notEqual(revoked, false, `${where}: revokeGrant of a grant not revoked before resolved false (racing a refresh of it)`);
  const left = await findable(first, [access, refreshed], [refresh]);
  assert.ok(
    left.every((found) => !found),
    `${where}: revokeGrant racing a refresh of its grant left a token findable (access, refreshed access, refresh: `
      + `${JSON.stringify(left)}; the refresh's saveTokens resolved ${String(saved)}); revokeGrant must record the grant's `
      + 'tombstone and remove its tokens as one transaction or script (or record the tombstone first and then remove every '
      + 'token of the grant, not only those it found before), and saveTokens check the tombstone in the transaction that '
      + `inserts, serialised against it; ${across}`,
  );
}

/**
 * The race rules of revocation: a `saveTokens` racing a revocation is wholly before it (and removed by it)
 * or wholly after it (and refused by its tombstone), never half of each. A store that checks the tombstone
 * outside the transaction that inserts (an `await` or a round trip between them) fails these every run.
 * @see RFC 7009 §2.1 (revocation takes effect at once), RFC 6749 §4.1.2 (replay revokes the grant).
 */
export const tokenRaceRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: 'concurrent revocations of one grant or one access token: no more than one resolves true, and not every one false; and revokeGrant racing a refresh of its grant leaves no token of it, in every interleaving',
    run: (context) => raceRevocations(context, context.store, context.store, 'the check and the write must be one statement or script'),
  },
  {
    tier: 'required',
    needsPeer: true,
    name: 'across instances (openPeer): concurrent revocations of one grant or one access token through two stores on one backend: no more than one resolves true, and not every one false; and revokeGrant racing a refresh of its grant through the other leaves no token of it, in every interleaving',
    async run(context) {
      if (!context.withPeer) throw new TypeError('the rule needs openPeer');
      await context.withPeer((peer) => raceRevocations(context, context.store, peer,
        acrossInstances('concurrent revocations of one grant or one access token', 'Decide the answer in the statement or '
          + 'script that writes, on the backend (DELETE … RETURNING, INSERT … ON CONFLICT DO NOTHING RETURNING, DEL\'s or SADD\'s answer)')));
    },
  },
  {
    tier: 'required',
    name: 'saveTokens racing revokeGrant: after both settle, no token of the grant can be found, in every interleaving',
    async run({ store, rounds }) {
      await raceSaveAgainst(
        store,
        rounds,
        (round) => tokensOfRound(round, { clientId: freshId('client'), userId: 'alice' }),
        (access) => store.tokens.revokeGrant(access.grantId),
      );
    },
  },
  {
    tier: 'administration',
    needs: ['store.tokens.revokeClientTokens'],
    name: 'saveTokens racing revokeClientTokens(clientId), authorized before it: after both settle, no token can be found, in every interleaving',
    async run({ store, rounds }) {
      const revoke = revokeClientTokensOf(store);
      await raceSaveAgainst(
        store,
        rounds,
        // Every fourth round a client_credentials token as the router saves it (userId null, a new grant): the
        // client revocation covers it too, whatever a store skips for a new grant.
        (round) => round % 4 === 1
          ? { access: buildToken({ clientId: freshId('client'), userId: null }), refresh: null, newGrant: true }
          : tokensOfRound(round, { clientId: freshId('client'), userId: 'alice' }),
        (access) => revoke(access.clientId),
      );
    },
  },
  {
    tier: 'administration',
    needs: ['store.tokens.revokeClientTokens'],
    name: 'saveTokens racing revokeClientTokens(clientId, userId), authorized before it: after both settle, no token can be found, in every interleaving',
    async run({ store, rounds }) {
      const revoke = revokeClientTokensOf(store);
      await raceSaveAgainst(
        store,
        rounds,
        (round) => tokensOfRound(round, { clientId: freshId('client'), userId: freshId('user') }),
        (access) => revoke(access.clientId, access.userId!),
      );
    },
  },
];
