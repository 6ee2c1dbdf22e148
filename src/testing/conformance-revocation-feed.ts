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
async function movesAcross(store: Store, what: string, revoke: (pair: ReturnType<typeof buildTokenPair>) => Promise<unknown>): Promise<void> {
  const feed = feedOf(store);
  if (!feed) return;
  const pair = buildTokenPair();
  assert.equal(await saveTokens(store, pair.access, pair.refresh), true);
  const before = feed.mark();
  await revoke(pair);
  assertMoved(before, feed.mark(), what);
}

/** Lets a turn of the event loop pass, so that a store whose revocation waits on I/O or a timer gets to run it. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Looks a token up through `store` as `requireBearer`'s cache does: the mark read before the lookup and again after
 * it, an unchanged mark vouching for what was found. Collects the marks that vouched for the token.
 */
function cacheLookups(store: Store, feed: RevocationFeed, tokenHash: string) {
  const state = { vouched: new Set<RevocationMark>(), seen: false };
  const lookUp = async (): Promise<void> => {
    const before = feed.mark();
    const found = await store.tokens.findAccessToken(tokenHash);
    state.seen ||= found !== null;
    if (before !== null && found !== null && feed.mark() === before) state.vouched.add(before);
  };
  return { state, lookUp };
}

/**
 * Runs `revoke` while `lookUp` runs back to back (so that a store whose round trips are microtasks interleaves
 * with it too), with a turn of the event loop every eighth (so that a store whose revocation waits on I/O is never
 * starved), and once more after the call resolved (a delete still pending then is caught too).
 */
async function lookingUpWhile(lookUp: () => Promise<void>, revoke: () => Promise<unknown>): Promise<void> {
  let resolved = false;
  const polling = (async () => {
    for (let n = 1; !resolved; n++) {
      await lookUp();
      if (n % 8 === 0) await nextTurn();
    }
    await lookUp();
  })();
  try {
    await revoke();
  } finally {
    resolved = true;
    await polling;
  }
}

/**
 * Runs `revoke` on a saved live token pair while looking the access token up over and over (`cacheLookups`), and
 * checks that no mark that vouched for the token is the mark once the revocation has resolved. A mark that moves
 * before the token is gone (at the call's start, or before its delete commits) fails: a lookup in between caches
 * the token under the new mark, and nothing moves it again.
 */
async function goneBeforeMoved(store: Store, what: string, revoke: (pair: ReturnType<typeof buildTokenPair>) => Promise<unknown>): Promise<void> {
  const feed = feedOf(store);
  if (!feed) return;
  const pair = buildTokenPair();
  assert.equal(await saveTokens(store, pair.access, pair.refresh), true);
  const { state, lookUp } = cacheLookups(store, feed, pair.access.tokenHash);
  await lookingUpWhile(lookUp, () => revoke(pair));
  const after = feed.mark();
  assert.ok(
    after === null || !state.vouched.has(after),
    `revocations.mark() moved before ${what} removed the token: a lookup found the token under the mark the feed still ` +
      'shows after the call resolved, so a cached token would outlive the revocation (move the mark as the delete ' +
      'commits, or after it, never before)',
  );
}

/**
 * How long a revocation made through a peer may take to move the store's mark: the notification latency of a
 * networked store (milliseconds; the README states it), with room for a loaded test machine.
 */
export const PEER_LATENCY_LIMIT_MS = 2_000;

/**
 * Saves a token pair through `peer`, looks the access token up through `store` (`cacheLookups`) while `revoke`
 * runs through `peer`, then waits up to `PEER_LATENCY_LIMIT_MS` for `store`'s mark to leave every mark under which
 * it found the token (or turn `null`).
 */
async function reachesFromPeer(store: Store, peer: Store, what: string, revoke: (pair: ReturnType<typeof buildTokenPair>) => Promise<unknown>): Promise<void> {
  const feed = feedOf(store);
  if (!feed) return;
  const pair = buildTokenPair();
  assert.equal(await saveTokens(peer, pair.access, pair.refresh), true);
  const { state, lookUp } = cacheLookups(store, feed, pair.access.tokenHash);
  // The save through the peer may itself move the mark (another connection's commit): let it settle first.
  for (let n = 0; n < 20 && state.vouched.size === 0; n++) {
    await lookUp();
    await nextTurn();
  }
  assert.ok(state.seen, 'the store did not find a token saved through its peer: openPeer must open the same backend');
  await lookingUpWhile(lookUp, () => revoke(pair));
  const deadline = Date.now() + PEER_LATENCY_LIMIT_MS;
  let mark = feed.mark();
  while (mark !== null && state.vouched.has(mark) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    mark = feed.mark();
  }
  assert.ok(
    mark === null || !state.vouched.has(mark),
    `revocations.mark() did not move within ${PEER_LATENCY_LIMIT_MS} ms of ${what} made through another store on the same ` +
      'backend: a token revoked by another instance (or the CLI) would stay in this instance\'s cache',
  );
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
  {
    tier: 'revocationFeed',
    name: 'revocations.mark() moves no earlier than revokeAccessToken and revokeGrant remove the token: no mark a lookup found it under outlives the call',
    async run({ store }) {
      await goneBeforeMoved(store, 'revokeAccessToken', (pair) => store.tokens.revokeAccessToken(pair.access.tokenHash));
      await goneBeforeMoved(store, 'revokeGrant', (pair) => store.tokens.revokeGrant(pair.access.grantId));
    },
  },
  {
    tier: 'revocationFeed',
    needs: ['store.revocations.mark', 'store.tokens.revokeClientTokens'],
    name: 'revocations.mark() moves no earlier than revokeClientTokens removes the tokens: no mark a lookup found one under outlives the call',
    async run({ store }) {
      if (!feedOf(store)) return;
      const revoke = revokeClientTokensOf(store);
      await goneBeforeMoved(store, 'revokeClientTokens(clientId)', (pair) => revoke(pair.access.clientId));
      await goneBeforeMoved(store, 'revokeClientTokens(clientId, userId)', (pair) => revoke(pair.access.clientId, pair.access.userId!));
    },
  },
  {
    tier: 'revocationFeed',
    needsPeer: true,
    name: 'revocations.mark() moves for revokeAccessToken and revokeGrant made through another store on the same backend (openPeer)',
    async run({ store, withPeer }) {
      await withPeer!(async (peer) => {
        await reachesFromPeer(store, peer, 'a revokeAccessToken', (pair) => peer.tokens.revokeAccessToken(pair.access.tokenHash));
        await reachesFromPeer(store, peer, 'a revokeGrant', (pair) => peer.tokens.revokeGrant(pair.access.grantId));
      });
    },
  },
  {
    tier: 'revocationFeed',
    needsPeer: true,
    needs: ['store.revocations.mark', 'store.tokens.revokeClientTokens'],
    name: 'revocations.mark() moves for revokeClientTokens made through another store on the same backend (openPeer)',
    async run({ store, withPeer }) {
      if (!feedOf(store)) return;
      await withPeer!(async (peer) => {
        const revoke = revokeClientTokensOf(peer);
        await reachesFromPeer(store, peer, 'a revokeClientTokens(clientId)', (pair) => revoke(pair.access.clientId));
        await reachesFromPeer(store, peer, 'a revokeClientTokens(clientId, userId)', (pair) => revoke(pair.access.clientId, pair.access.userId!));
      });
    },
  },
];
