// Conformance rules for codeRedemption: a peek that consumes nothing, and a consume and save that are one step.
import assert from 'node:assert/strict';
import type { AuthorizationCodeRecord, CodeRedemption, RedeemResult, Store, TokenRecord } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildCode, buildTokenPair, justExpired } from './conformance-fixtures.js';
import { revokeClientTokensOf } from './conformance-parts.js';
import { describeRound, forEachRound, race } from './interleave.js';

/** codeRedemption is in no tier: rules that need it name both of its methods. */
const NEEDS = ['store.codeRedemption.peekCode', 'store.codeRedemption.redeemCode'] as const;

/** Concurrent redemptions of one code per round of the race rule. */
const RACERS = 4;

function redemptionOf(store: Store): CodeRedemption {
  return store.codeRedemption!;
}

/** The access and refresh token the exchange of `code` mints. */
function tokensOf(code: AuthorizationCodeRecord): { access: TokenRecord; refresh: TokenRecord } {
  return buildTokenPair({ grantId: code.grantId, clientId: code.clientId, userId: code.userId, scope: code.scope, issuer: code.issuer });
}

/** Redeems `code` with a fresh pair of tokens authorized at its issuedAt, as the router does. */
async function redeem(store: Store, code: AuthorizationCodeRecord): Promise<{ result: RedeemResult; access: TokenRecord; refresh: TokenRecord }> {
  const { access, refresh } = tokensOf(code);
  const result = await redemptionOf(store).redeemCode(code.codeHash, access, refresh, { authorizedAt: code.issuedAt });
  return { result, access, refresh };
}

/** Whether the store holds the pair (both, as saveTokens saves them, all or nothing). */
async function holds(store: Store, access: TokenRecord, refresh: TokenRecord): Promise<boolean> {
  const [a, r] = await Promise.all([store.tokens.findAccessToken(access.tokenHash), store.tokens.findRefreshToken(refresh.tokenHash)]);
  assert.equal(a === null, r === null, 'one token of a pair was saved without the other');
  return a !== null;
}

/**
 * The rules of `codeRedemption`, which run only when the store has it: the peek is a read, and the
 * redemption is `consumeCode` and `saveTokens` as one step, with their guarantees.
 * @see RFC 6749 §4.1.2 ("MUST NOT use the authorization code more than once"), §4.1.3.
 */
export const codeRedemptionRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    needs: NEEDS,
    name: 'peekCode reads a live unused code without consuming it: consumeCode consumes it afterwards',
    async run({ store }) {
      const code = buildCode();
      await store.codes.saveCode(code);
      assert.deepEqual(await redemptionOf(store).peekCode(code.codeHash), code);
      assert.deepEqual(await redemptionOf(store).peekCode(code.codeHash), code, 'a second peek');
      assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'consumed', record: code });
    },
  },
  {
    tier: 'required',
    needs: NEEDS,
    name: 'peekCode of an unknown, an expired or a consumed code is null',
    async run({ store }) {
      const unknown = buildCode();
      const expired = buildCode({ expiresAt: justExpired() });
      const used = buildCode();
      await store.codes.saveCode(expired);
      await store.codes.saveCode(used);
      assert.equal((await store.codes.consumeCode(used.codeHash)).kind, 'consumed');
      for (const [label, code] of [['unknown', unknown], ['expired', expired], ['consumed', used]] as const) {
        assert.equal(await redemptionOf(store).peekCode(code.codeHash), null, `peekCode of a ${label} code`);
      }
    },
  },
  {
    tier: 'required',
    needs: NEEDS,
    name: 'redeemCode consumes the code and saves both tokens; the code is replayed to every later call',
    async run({ store }) {
      const code = buildCode();
      await store.codes.saveCode(code);
      const { result, access, refresh } = await redeem(store, code);
      assert.deepEqual(result, { kind: 'consumed', record: code, saved: true });
      assert.deepEqual(await store.tokens.findAccessToken(access.tokenHash), access);
      assert.deepEqual(await store.tokens.findRefreshToken(refresh.tokenHash), refresh);
      assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'replayed', grantId: code.grantId });
      const again = await redeem(store, code);
      assert.deepEqual(again.result, { kind: 'replayed', grantId: code.grantId });
      assert.equal(await holds(store, again.access, again.refresh), false, 'a replayed redemption saved its tokens');
      assert.equal(await redemptionOf(store).peekCode(code.codeHash), null, 'peekCode of the redeemed code');
    },
  },
  {
    tier: 'required',
    needs: NEEDS,
    name: 'redeemCode of an unknown or an expired code is not_found and saves nothing',
    async run({ store }) {
      const expired = buildCode({ expiresAt: justExpired() });
      await store.codes.saveCode(expired);
      for (const code of [buildCode(), expired]) {
        const { result, access, refresh } = await redeem(store, code);
        assert.deepEqual(result, { kind: 'not_found' });
        assert.equal(await holds(store, access, refresh), false, 'tokens saved for a code that was not found');
      }
    },
  },
  {
    tier: 'required',
    needs: NEEDS,
    name: 'redeemCode with tokens of another grant uses the code up and saves nothing',
    async run({ store }) {
      const code = buildCode();
      await store.codes.saveCode(code);
      const { access, refresh } = buildTokenPair({ clientId: code.clientId, userId: code.userId });
      const result = await redemptionOf(store).redeemCode(code.codeHash, access, refresh, { authorizedAt: code.issuedAt });
      assert.deepEqual(result, { kind: 'consumed', record: code, saved: false });
      assert.equal(await holds(store, access, refresh), false, 'tokens of another grant were saved');
      assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'replayed', grantId: code.grantId });
    },
  },
  {
    tier: 'required',
    needs: NEEDS,
    name: 'redeemCode refuses, as saveTokens does, the tokens of a revoked grant: the code is used up, nothing saved',
    async run({ store }) {
      const code = buildCode();
      await store.codes.saveCode(code);
      await store.tokens.revokeGrant(code.grantId);
      const { result, access, refresh } = await redeem(store, code);
      assert.deepEqual(result, { kind: 'consumed', record: code, saved: false });
      assert.equal(await holds(store, access, refresh), false, 'tokens of a revoked grant were saved');
    },
  },
  {
    tier: 'administration',
    needs: [...NEEDS, 'store.tokens.revokeClientTokens'],
    name: "redeemCode refuses the tokens of a code whose integration's, or user's, tokens were revoked after it was issued",
    async run({ store }) {
      const revokeClientTokens = revokeClientTokensOf(store);
      for (const byUser of [false, true]) {
        const code = buildCode();
        await store.codes.saveCode(code);
        await revokeClientTokens(code.clientId, byUser ? code.userId : undefined);
        const { result, access, refresh } = await redeem(store, code);
        const what = byUser ? "the user's tokens at the integration" : "the integration's tokens";
        assert.deepEqual(result, { kind: 'consumed', record: code, saved: false }, `after a revocation of ${what}`);
        assert.equal(await holds(store, access, refresh), false, `saved after a revocation of ${what}`);
      }
    },
  },
  {
    tier: 'required',
    needs: NEEDS,
    name: 'of N concurrent redeemCode calls (and a consumeCode) for one code exactly one consumes it, and only its tokens are saved, in every interleaving',
    async run({ store, rounds }) {
      await forEachRound(rounds, async (round, schedule) => {
        const where = describeRound(round, schedule);
        const code = buildCode();
        await store.codes.saveCode(code);
        const calls = Array.from({ length: RACERS }, () => tokensOf(code));
        const redeemWith = ({ access, refresh }: { access: TokenRecord; refresh: TokenRecord }) =>
          redemptionOf(store).redeemCode(code.codeHash, access, refresh, { authorizedAt: code.issuedAt });
        const [first, rest] = await race(
          () => redeemWith(calls[0]!),
          () => Promise.all([...calls.slice(1).map(redeemWith), store.codes.consumeCode(code.codeHash)]),
          schedule,
        );
        const redeemed: RedeemResult[] = [first, ...(rest.slice(0, -1) as RedeemResult[])];
        const results = [...redeemed, rest[rest.length - 1]!];
        const winners = results.filter((r) => r.kind === 'consumed');
        assert.equal(winners.length, 1, `${where}: ${winners.length} of ${results.length} calls consumed the code`);
        for (const r of results.filter((r) => r.kind !== 'consumed')) assert.deepEqual(r, { kind: 'replayed', grantId: code.grantId }, where);
        for (const [i, r] of redeemed.entries()) {
          // Nothing revoked the grant: the redemption that consumed the code must have saved its tokens.
          if (r.kind === 'consumed') assert.equal(r.saved, true, `${where}: the winning redemption's save was refused`);
          const isSaved = await holds(store, calls[i]!.access, calls[i]!.refresh);
          assert.equal(isSaved, r.kind === 'consumed', `${where}: redemption ${i} (${r.kind}) ${isSaved ? 'had its tokens saved' : 'said saved, but its tokens are not there'}`);
        }
      });
    },
  },
];
