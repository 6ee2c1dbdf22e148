// Race rules for saveTokens against each revocation: whatever the interleaving, nothing revoked survives.
import assert from 'node:assert/strict';
import type { Store, TokenRecord } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildToken, buildTokenPair, findable } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { revokeClientTokensOf } from './conformance-parts.js';
import { describeRound, forEachRound, race } from './interleave.js';

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
 * The race rules of revocation: a `saveTokens` racing a revocation is wholly before it (and removed by it)
 * or wholly after it (and refused by its tombstone), never half of each. A store that checks the tombstone
 * outside the transaction that inserts (an `await` or a round trip between them) fails these every run.
 * @see RFC 7009 §2.1 (revocation takes effect at once), RFC 6749 §4.1.2 (replay revokes the grant).
 */
export const tokenRaceRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: 'concurrent revocations of one grant or one access token: no more than one resolves true, and not every one false',
    async run({ store, rounds }) {
      // Two replays of one code, two RFC 7009 revocations of one token: the router reports the revocation unless the
      // store answers false, so a store answering booleans must give exactly one caller true.
      for (let round = 0; round < Math.min(rounds, 20); round++) {
        const { access, refresh } = buildTokenPair({ clientId: freshId('client'), userId: 'alice' });
        assert.equal(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() }), true);
        for (const [what, revoke] of [
          ['revokeAccessToken', () => store.tokens.revokeAccessToken(access.tokenHash)],
          ['revokeGrant', () => store.tokens.revokeGrant(access.grantId)],
        ] as const) {
          const answers = await Promise.all(Array.from({ length: 4 }, revoke));
          const wins = answers.filter((answer) => answer === true).length;
          assert.ok(wins <= 1, `${what}: ${wins} of 4 concurrent calls resolved true (round ${round})`);
          assert.ok(answers.some((answer) => answer !== false), `${what}: every one of 4 concurrent calls resolved false (round ${round})`);
        }
      }
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
