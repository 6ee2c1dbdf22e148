// Conformance rules for the lifecycle additions: deleteClient, and the previous secret of a planned rotation.
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildClient, buildCode, buildConsent, buildTokenPair, findable, momentAfterNow, saveTokens, secondsFromNow } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { administration, consentsOf } from './conformance-parts.js';

/**
 * deleteClient is optional in every tier (stores of contract v1 lack it): its rules need it and the
 * administration tier's integrations (whose `revokeClientTokens` they call too).
 */
const DELETE_NEEDS = [
  'store.clients.createClient', 'store.clients.updateClient', 'store.clients.listClients', 'store.clients.deleteClient',
] as const;

/**
 * The rules of `deleteClient` (which run only when the store has it) and of the previous secret's two fields
 * (which hold for every store: it keeps both, or, written for contract v1, neither).
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §2.3.1 (client password), RFC 6819 §5.2.3.7.
 */
export const clientLifecycleRules: readonly ConformanceRule[] = [
  {
    tier: 'administration',
    needs: DELETE_NEEDS,
    name: 'deleteClient removes the integration, resolves true once and false for an unknown id',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient();
      const { client: other } = buildClient();
      await clients.createClient(client);
      await clients.createClient(other);
      assert.equal(await clients.deleteClient!(client.clientId), true);
      assert.equal(await clients.findClient(client.clientId), null);
      assert.equal(await clients.deleteClient!(client.clientId), false);
      assert.equal(await clients.deleteClient!(freshId()), false);
      assert.deepEqual(await clients.findClient(other.clientId), other);
      assert.deepEqual((await clients.listClients()).map((c) => c.clientId), [other.clientId]);
    },
  },
  {
    tier: 'administration',
    needs: [...DELETE_NEEDS, 'store.consents.findConsent', 'store.consents.saveConsent', 'store.consents.listConsents'],
    name: "after revokeClientTokens and deleteClient the integration's tokens are gone, its codes and consents gone or inert, and others' stay",
    async run({ store }) {
      const { clients, tokens } = administration(store);
      const { client } = buildClient();
      const { client: other } = buildClient();
      await clients.createClient(client);
      await clients.createClient(other);
      const mine = buildTokenPair({ clientId: client.clientId, userId: 'alice' });
      const theirs = buildTokenPair({ clientId: other.clientId, userId: 'alice' });
      await saveTokens(store, mine.access, mine.refresh);
      await saveTokens(store, theirs.access, theirs.refresh);
      const code = buildCode({ clientId: client.clientId });
      await store.codes.saveCode(code);
      const consents = consentsOf(store);
      await consents.saveConsent(buildConsent({ userId: 'alice', clientId: client.clientId }));
      await consents.saveConsent(buildConsent({ userId: 'alice', clientId: other.clientId }));
      await tokens.revokeClientTokens(client.clientId);
      assert.equal(await clients.deleteClient!(client.clientId), true);
      assert.deepEqual(await findable(store, [mine.access], [mine.refresh]), [false, false]);
      assert.deepEqual(await findable(store, [theirs.access], [theirs.refresh]), [true, true]);
      // A store may leave codes and consents it cannot reach by integration (see ClientStore.deleteClient),
      // provided they are inert once the id is registered again: a code's tokens refused by the tombstone,
      // a consent older than the new integration (the router ignores those).
      const { client: again } = buildClient({ clientId: client.clientId, createdAt: await momentAfterNow() });
      assert.equal(await clients.createClient(again), true);
      const consumed = await store.codes.consumeCode(code.codeHash);
      if (consumed.kind === 'consumed') {
        const fromCode = buildTokenPair({ clientId: client.clientId, userId: code.userId, grantId: code.grantId });
        const saved = await saveTokens(store, fromCode.access, fromCode.refresh, consumed.record.issuedAt);
        assert.equal(saved, false, "a code left by deleteClient must not yield tokens: the integration's tombstone is after its issuedAt");
      }
      const inert = (consent: { grantedAt: Date } | null | undefined) => !consent || consent.grantedAt < again.createdAt;
      assert.ok(inert(await consents.findConsent('alice', client.clientId)), 'a consent left by deleteClient must be older than the integration created again');
      const listed = await consents.listConsents('alice');
      assert.ok(inert(listed.find((c) => c.clientId === client.clientId)), 'a consent listed after deleteClient must be older than the integration created again');
      assert.ok(listed.some((c) => c.clientId === other.clientId), "another integration's consent stays listed");
      assert.notEqual(await consents.findConsent('alice', other.clientId), null);
    },
  },
  {
    tier: 'administration',
    needs: DELETE_NEEDS,
    name: 'an integration created again with a deleted id revives none of the old tokens, and refuses tokens authorized before the delete',
    async run({ store }) {
      const { clients, tokens } = administration(store);
      const { client } = buildClient();
      await clients.createClient(client);
      const old = buildTokenPair({ clientId: client.clientId, userId: 'alice' });
      await saveTokens(store, old.access, old.refresh);
      const authorizedBefore = secondsFromNow(-1);
      await tokens.revokeClientTokens(client.clientId);
      await clients.deleteClient!(client.clientId);
      const { client: again } = buildClient({ clientId: client.clientId });
      assert.equal(await clients.createClient(again), true);
      assert.deepEqual(await findable(store, [old.access], [old.refresh]), [false, false]);
      const late = buildTokenPair({ clientId: client.clientId, userId: 'alice' });
      assert.equal(await saveTokens(store, late.access, late.refresh, authorizedBefore), false);
      const fresh = buildTokenPair({ clientId: client.clientId, userId: 'alice' });
      assert.equal(await saveTokens(store, fresh.access, fresh.refresh, new Date(Date.now() + 1000)), true);
    },
  },
  {
    tier: 'administration',
    name: 'the previous secret and its expiry round-trip together through updateClient, findClient and listClients, null removes both, and a store that ignores them returns neither',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient();
      await clients.createClient(client);
      const previousClientSecretHash = hashSecret(freshId());
      const previousClientSecretExpiresAt = new Date(Date.now() + 86_400_000);
      const updated = await clients.updateClient(client.clientId, {
        clientSecretHash: hashSecret(freshId()),
        previousClientSecretHash,
        previousClientSecretExpiresAt,
      });
      assert.ok(updated !== null);
      const kept = 'previousClientSecretHash' in updated;
      // Both or neither: a hash without its expiry (or the reverse) would make the grace period unknowable.
      assert.equal('previousClientSecretExpiresAt' in updated, kept, 'the previous secret and its expiry come together');
      if (!kept) {
        assert.ok(!('previousClientSecretHash' in (await clients.findClient(client.clientId))!));
        return;
      }
      assert.equal(updated.previousClientSecretHash, previousClientSecretHash);
      assert.ok(updated.previousClientSecretExpiresAt instanceof Date, 'the expiry must be a Date');
      assert.equal(updated.previousClientSecretExpiresAt.getTime(), previousClientSecretExpiresAt.getTime());
      assert.deepEqual(await clients.findClient(client.clientId), updated);
      assert.deepEqual(await clients.listClients(), [updated]);
      const renamed = await clients.updateClient(client.clientId, { name: 'Renamed integration' });
      assert.equal(renamed?.previousClientSecretHash, previousClientSecretHash, 'another change kept the previous secret');
      const cleared = await clients.updateClient(client.clientId, { previousClientSecretHash: null, previousClientSecretExpiresAt: null });
      assert.ok(cleared !== null && !('previousClientSecretHash' in cleared) && !('previousClientSecretExpiresAt' in cleared));
      assert.deepEqual(await clients.findClient(client.clientId), cleared);
    },
  },
];
