// Conformance rules for revokeClientTokens: what it removes, and the tombstones that refuse what it overtook.
import assert from 'node:assert/strict';
import type { ConformanceRule } from './conformance-types.js';
import { buildToken, buildTokenPair, findable, momentAfterNow, saveTokens, secondsFromNow } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { revokeClientTokensOf } from './conformance-parts.js';

/** revokeClientTokens is in both the administration and the consents tier: its rules need only it. */
const NEEDS = ['store.tokens.revokeClientTokens'] as const;

/**
 * The `revokeClientTokens` rules. Disabling an integration, rotating its secret and withdrawing a consent
 * take effect when the call returns: every token of the integration (or of the user at it) is gone, and a
 * token request that began at or before the call can no longer save one (`authorizedAt`), nor can a
 * refresh that already read one of the removed refresh tokens (the grant is tombstoned).
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.4 (refresh tokens die with the authorization).
 */
export const revocationRules: readonly ConformanceRule[] = [
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'revokeClientTokens resolves for unknown ids (idempotent, nothing to remove)',
    async run({ store }) {
      const revoke = revokeClientTokensOf(store);
      await revoke(freshId());
      await revoke(freshId(), freshId());
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'revokeClientTokens(clientId) removes every token of that client, client_credentials ones included, and none of others',
    async run({ store }) {
      const alice = buildTokenPair({ userId: 'alice' });
      const bob = buildTokenPair({ userId: 'bob', clientId: alice.access.clientId });
      const machine = buildToken({ userId: null, clientId: alice.access.clientId });
      const otherClient = buildTokenPair({ userId: 'alice' });
      for (const pair of [alice, bob, otherClient]) await saveTokens(store, pair.access, pair.refresh);
      await saveTokens(store, machine, null);
      await revokeClientTokensOf(store)(alice.access.clientId);
      assert.deepEqual(await findable(store, [alice.access, bob.access, machine], [alice.refresh, bob.refresh]), [false, false, false, false, false]);
      assert.deepEqual(await findable(store, [otherClient.access], [otherClient.refresh]), [true, true]);
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: "revokeClientTokens(clientId, userId) removes only that user's tokens at that client",
    async run({ store }) {
      const alice = buildTokenPair({ userId: 'alice' });
      const bob = buildTokenPair({ userId: 'bob', clientId: alice.access.clientId });
      const machine = buildToken({ userId: null, clientId: alice.access.clientId });
      const aliceElsewhere = buildTokenPair({ userId: 'alice' });
      for (const pair of [alice, bob, aliceElsewhere]) await saveTokens(store, pair.access, pair.refresh);
      await saveTokens(store, machine, null);
      await revokeClientTokensOf(store)(alice.access.clientId, 'alice');
      assert.deepEqual(await findable(store, [alice.access], [alice.refresh]), [false, false]);
      assert.deepEqual(await findable(store, [bob.access, machine, aliceElsewhere.access], [bob.refresh, aliceElsewhere.refresh]), [true, true, true, true, true]);
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'after revokeClientTokens(clientId), saveTokens refuses tokens authorized at or before it and accepts tokens authorized after it',
    async run({ store }) {
      const clientId = freshId('client');
      const authorizedBefore = new Date();
      await revokeClientTokensOf(store)(clientId);
      const authorizedAfter = await momentAfterNow();
      const overtaken = buildTokenPair({ clientId, userId: 'alice' });
      const machine = buildToken({ clientId, userId: null });
      assert.equal(await saveTokens(store, overtaken.access, overtaken.refresh, authorizedBefore), false, 'a token authorized at or before the revocation (a moment equal to it counts as at) was saved');
      assert.equal(await saveTokens(store, machine, null, authorizedBefore), false, 'a client_credentials token authorized at or before the revocation (a moment equal to it counts as at) was saved');
      assert.deepEqual(await findable(store, [overtaken.access, machine], [overtaken.refresh]), [false, false, false],
        'findable after a refused save ([access, client_credentials access, refresh]): a refused save must write nothing');
      const fresh = buildTokenPair({ clientId, userId: 'alice' });
      assert.equal(await saveTokens(store, fresh.access, fresh.refresh, authorizedAfter), true, 'a token authorized after the revocation was refused');
      assert.deepEqual(await findable(store, [fresh.access], [fresh.refresh]), [true, true]);
      const elsewhere = buildTokenPair({ userId: 'alice' });
      assert.equal(await saveTokens(store, elsewhere.access, elsewhere.refresh, authorizedBefore), true, 'another client was revoked too');
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'after revokeClientTokens(clientId), a save with newGrant authorized at or before it is refused too',
    async run({ store }) {
      const clientId = freshId('client');
      const authorizedBefore = new Date();
      await revokeClientTokensOf(store)(clientId);
      const authorizedAfter = await momentAfterNow();
      const overtaken = buildToken({ clientId, userId: null });
      assert.equal(await store.tokens.saveTokens(overtaken, null, { authorizedAt: authorizedBefore, newGrant: true }), false,
        'a save with newGrant authorized at or before revokeClientTokens(clientId) was accepted: newGrant only says no revokeGrant can race it');
      assert.deepEqual(await findable(store, [overtaken], []), [false], 'a refused save with newGrant wrote its token');
      const fresh = buildToken({ clientId, userId: null });
      assert.equal(await store.tokens.saveTokens(fresh, null, { authorizedAt: authorizedAfter, newGrant: true }), true,
        'a save with newGrant authorized after the revocation was refused');
      await revokeClientTokensOf(store)(clientId);
      assert.deepEqual(await findable(store, [fresh], []), [false], 'revokeClientTokens left a token saved with newGrant');
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'after revokeClientTokens(clientId, userId), saveTokens refuses that user\'s tokens authorized at or before it and accepts them authorized after it',
    async run({ store }) {
      const clientId = freshId('client');
      const authorizedBefore = new Date();
      await revokeClientTokensOf(store)(clientId, 'alice');
      const authorizedAfter = await momentAfterNow();
      const overtaken = buildTokenPair({ clientId, userId: 'alice' });
      assert.equal(await saveTokens(store, overtaken.access, overtaken.refresh, authorizedBefore), false, 'a token authorized at or before the revocation (a moment equal to it counts as at) was saved');
      assert.deepEqual(await findable(store, [overtaken.access], [overtaken.refresh]), [false, false], 'findable after a refused save ([access, refresh])');
      const fresh = buildTokenPair({ clientId, userId: 'alice' });
      assert.equal(await saveTokens(store, fresh.access, fresh.refresh, authorizedAfter), true, 'a token authorized after the revocation was refused');
      assert.deepEqual(await findable(store, [fresh.access], [fresh.refresh]), [true, true]);
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: "revokeClientTokens(clientId, userId) leaves saves of other users, of client_credentials (userId null) and of that user at other clients",
    async run({ store }) {
      const clientId = freshId('client');
      const authorizedBefore = new Date();
      await revokeClientTokensOf(store)(clientId, 'alice');
      const bob = buildTokenPair({ clientId, userId: 'bob' });
      const machine = buildToken({ clientId, userId: null });
      const aliceElsewhere = buildTokenPair({ userId: 'alice' });
      assert.equal(await saveTokens(store, bob.access, bob.refresh, authorizedBefore), true, "another user's save was refused");
      assert.equal(await saveTokens(store, machine, null, authorizedBefore), true, 'a client_credentials save was refused');
      assert.equal(await saveTokens(store, aliceElsewhere.access, aliceElsewhere.refresh, authorizedBefore), true, "the user's save at another client was refused");
      assert.deepEqual(await findable(store, [bob.access, machine, aliceElsewhere.access]), [true, true, true]);
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'after revokeClientTokens(clientId), a grant whose refresh token it removed is refused even with a later authorizedAt',
    async run({ store }) {
      const { access, refresh } = buildTokenPair({ userId: 'alice' });
      await saveTokens(store, access, refresh);
      await revokeClientTokensOf(store)(access.clientId);
      // A refresh that read the refresh token before the revocation saves with its own, later, request start.
      for (const authorizedAt of [await momentAfterNow(), secondsFromNow(3600)]) {
        const minted = buildToken({ grantId: access.grantId, clientId: access.clientId, userId: 'alice' });
        assert.equal(await saveTokens(store, minted, null, authorizedAt), false, 'a token of a revoked grant was saved');
        assert.deepEqual(await findable(store, [minted]), [false]);
      }
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'after revokeClientTokens(clientId, userId), a grant whose refresh token it removed is refused even with a later authorizedAt, and other users\' grants are not',
    async run({ store }) {
      const alice = buildTokenPair({ userId: 'alice' });
      const bob = buildTokenPair({ userId: 'bob', clientId: alice.access.clientId });
      for (const pair of [alice, bob]) await saveTokens(store, pair.access, pair.refresh);
      await revokeClientTokensOf(store)(alice.access.clientId, 'alice');
      const authorizedAt = await momentAfterNow();
      const minted = buildToken({ grantId: alice.access.grantId, clientId: alice.access.clientId, userId: 'alice' });
      assert.equal(await saveTokens(store, minted, null, authorizedAt), false, 'a token of a revoked grant was saved');
      const bobs = buildToken({ grantId: bob.access.grantId, clientId: bob.access.clientId, userId: 'bob' });
      assert.equal(await saveTokens(store, bobs, null, authorizedAt), true, "another user's grant was revoked");
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'a later revokeClientTokens moves the revocation moment forward: the latest one counts, for a client and for a user',
    async run({ store }) {
      const revoke = revokeClientTokensOf(store);
      const clientId = freshId('client');
      await revoke(clientId);
      const between = await momentAfterNow();
      await revoke(clientId);
      const userClientId = freshId('client');
      await revoke(userClientId, 'alice');
      const betweenUser = await momentAfterNow();
      await revoke(userClientId, 'alice');
      assert.equal(await saveTokens(store, buildToken({ clientId, userId: 'bob' }), null, between), false, 'the second client revocation was not recorded');
      assert.equal(await saveTokens(store, buildToken({ clientId: userClientId, userId: 'alice' }), null, betweenUser), false, 'the second user revocation was not recorded');
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'a revocation whose moment is earlier than the one recorded (two processes, committed out of clock order) leaves the latest moment',
    async run({ store }) {
      const revoke = revokeClientTokensOf(store);
      const clientId = freshId('client');
      const userClientId = freshId('client');
      // A token request that began just before the first revocations: they refuse what it would save.
      const between = new Date(Date.now());
      await revoke(clientId);
      await revoke(userClientId, 'alice');
      // The next calls take their moment (Date.now(), as the contract says) 10 s back: a process whose call began
      // before the first's, and committed after it. The recorded moment must stay the latest, not the last written.
      await withClockBack(10_000, async () => {
        await revoke(clientId);
        await revoke(userClientId, 'alice');
      });
      assert.equal(await saveTokens(store, buildToken({ clientId, userId: 'bob' }), null, between), false,
        'an earlier revocation moment replaced the latest one: a token authorized between the two was saved (keep the greater moment, e.g. ON CONFLICT … SET revoked_at = greatest(revoked_at, excluded.revoked_at))');
      assert.equal(await saveTokens(store, buildToken({ clientId: userClientId, userId: 'alice' }), null, between), false,
        "an earlier user revocation moment replaced the latest one: the user's token authorized between the two was saved");
    },
  },
];

/** Runs `body` with `Date.now()` answering `ms` earlier than the clock, and puts it back whatever happens. */
async function withClockBack(ms: number, body: () => Promise<void>): Promise<void> {
  const real = Date.now;
  Date.now = () => real.call(Date) - ms;
  try {
    await body();
  } finally {
    Date.now = real;
  }
}
