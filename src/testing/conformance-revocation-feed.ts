// Conformance rules for the revocation feed: its mark answers at once and moves with every revocation.
import assert from 'node:assert/strict';
import type { RevocationFeed, RevocationMark, Store } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildTokenPair, saveTokens } from './conformance-fixtures.js';
import { revokeClientTokensOf } from './conformance-parts.js';

/**
 * The store's feed, or `null` without one: the tier is optional, and a runner that could not tell the store's
 * shape beforehand (so did not skip these rules) has nothing to hold such a store to.
 */
function feedOf(store: Store): RevocationFeed | null {
  const feed = store.revocations;
  return typeof feed?.mark === 'function' ? feed : null;
}

/** A mark that is `null` (unsure) always passes: only an unchanged, vouched-for mark is wrong. */
function assertMoved(before: RevocationMark, after: RevocationMark, what: string): void {
  if (before === null || after === null) return;
  assert.notEqual(after, before, `revocations.mark() did not change after ${what}: a cached token would outlive it`);
}

/** Runs `revoke` on a saved live token pair and checks that the mark moved across it. */
async function movesAcross(store: Store, what: string, revoke: (pair: ReturnType<typeof buildTokenPair>) => Promise<void>): Promise<void> {
  const feed = feedOf(store);
  if (!feed) return;
  const pair = buildTokenPair();
  assert.equal(await saveTokens(store, pair.access, pair.refresh), true);
  const before = feed.mark();
  await revoke(pair);
  assertMoved(before, feed.mark(), what);
}

/**
 * The `revocationFeed` rules: `mark()` is synchronous, and it moves across every revocation, so that
 * `requireBearer`'s cache never serves a token revoked through this store.
 * @see RFC 7009 §2.1, RFC 6750 §3.1 (a revoked token is `invalid_token` from then on).
 */
export const revocationFeedRules: readonly ConformanceRule[] = [
  {
    tier: 'revocationFeed',
    name: 'revocations.mark() answers synchronously with a number, a string or null, never a promise',
    async run({ store }) {
      const feed = feedOf(store);
      if (!feed) return;
      const mark: unknown = feed.mark();
      assert.ok(mark === null || typeof mark === 'number' || typeof mark === 'string', `mark() returned ${typeof mark}`);
    },
  },
  {
    tier: 'revocationFeed',
    name: 'revocations.mark() changes across revokeAccessToken of a live access token',
    async run({ store }) {
      await movesAcross(store, 'revokeAccessToken', (pair) => store.tokens.revokeAccessToken(pair.access.tokenHash));
    },
  },
  {
    tier: 'revocationFeed',
    name: 'revocations.mark() changes across revokeGrant',
    async run({ store }) {
      await movesAcross(store, 'revokeGrant', (pair) => store.tokens.revokeGrant(pair.access.grantId));
    },
  },
  {
    tier: 'revocationFeed',
    needs: ['store.revocations.mark', 'store.tokens.revokeClientTokens'],
    name: 'revocations.mark() changes across revokeClientTokens, of an integration and of one user at it',
    async run({ store }) {
      if (!feedOf(store)) return;
      const revoke = revokeClientTokensOf(store);
      await movesAcross(store, 'revokeClientTokens(clientId)', (pair) => revoke(pair.access.clientId));
      await movesAcross(store, 'revokeClientTokens(clientId, userId)', (pair) => revoke(pair.access.clientId, pair.access.userId!));
    },
  },
];
