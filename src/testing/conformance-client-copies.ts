// Conformance rules for clientCopies: copies only of what was found, and saves that refuse a stale copy.
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { ClientChanges, OAuthClient, Store } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildClient, buildToken, secondsFromNow } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { administration } from './conformance-parts.js';

/** clientCopies is in no tier; its rules change integrations, so they need administration too. */
const NEEDS = [
  'store.clients.createClient', 'store.clients.updateClient', 'store.clients.listClients', 'store.clientCopies.find',
] as const;

/** One change of each field `updateClient` can change: each must make an earlier copy stale. */
const CHANGES: readonly ClientChanges[] = [
  { clientSecretHash: hashSecret('rotated') },
  { name: 'Renamed integration' },
  { redirectUris: ['https://app.example.com/callback'] },
  { allowedScopes: ['envelopes:read'] },
  { requirePkce: true }, // a store keeps what it is given: registration's rules (no PKCE for client_credentials) are not its to check
  { disabled: true },
  { tokenEndpointAuthMethod: 'client_secret_basic' },
  { previousClientSecretHash: hashSecret('previous'), previousClientSecretExpiresAt: secondsFromNow(600) },
];

/** The copy `findClient` left behind for `clientId`; the store must keep one of what it found. */
async function copyAfterLookup(store: Store, clientId: string) {
  await store.clients.findClient(clientId);
  const copy = store.clientCopies!.find(clientId);
  assert.ok(copy, 'clientCopies kept nothing of an integration findClient found');
  return copy;
}

/** Saves a client_credentials token of `client` as authenticated from a copy of `revision`. */
function saveUnder(store: Store, client: OAuthClient, revision: string): Promise<boolean> {
  return store.tokens.saveTokens(buildToken({ clientId: client.clientId, userId: null }), null, {
    authorizedAt: new Date(), clientRevision: revision,
  });
}

/**
 * The rules of `clientCopies`, which run only when the store has it. A copy may be stale at any moment; what
 * makes it safe is the save: `clientRevision` refuses tokens whose integration changed since the copy was read.
 * @see RFC 6749 §2.3.1 (client authentication), RFC 7009 §2.1 (a revocation counts from then on).
 */
export const clientCopyRules: readonly ConformanceRule[] = [
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'clientCopies keeps only what a lookup found: never an unknown id, and the copy is the record read',
    async run({ store }) {
      const { clients } = administration(store);
      const unknown = freshId();
      assert.equal(await clients.findClient(unknown), null);
      assert.equal(store.clientCopies!.find(unknown), undefined);
      const { client } = buildClient({ flow: 'client_credentials', redirectUris: [] });
      assert.equal(await clients.createClient(client), true);
      const copy = await copyAfterLookup(store, client.clientId);
      assert.deepEqual(copy.client, client);
      assert.equal(typeof copy.revision, 'string');
    },
  },
  {
    tier: 'administration',
    needs: NEEDS,
    name: 'saveTokens saves under the clientRevision of a current copy, and refuses it after any change to the integration, field by field',
    async run({ store }) {
      const { clients } = administration(store);
      for (const change of CHANGES) {
        const { client } = buildClient({ flow: 'client_credentials', redirectUris: [] });
        assert.equal(await clients.createClient(client), true);
        const before = await copyAfterLookup(store, client.clientId);
        assert.equal(await saveUnder(store, client, before.revision), true, 'refused under a current copy');
        assert.ok(await clients.updateClient(client.clientId, change));
        const field = Object.keys(change).join(', ');
        assert.equal(await saveUnder(store, client, before.revision), false, `saved under a copy older than a change of ${field}`);
        const after = await copyAfterLookup(store, client.clientId);
        assert.notEqual(after.revision, before.revision, `a change of ${field} kept the revision`);
        assert.equal(await saveUnder(store, client, after.revision), true, `refused under the copy read after a change of ${field}`);
      }
    },
  },
  {
    tier: 'administration',
    needs: [...NEEDS, 'store.clients.deleteClient'],
    name: 'saveTokens refuses the clientRevision of a copy once its integration is deleted, even if another is registered under its id',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient({ flow: 'client_credentials', redirectUris: [] });
      assert.equal(await clients.createClient(client), true);
      const copy = await copyAfterLookup(store, client.clientId);
      assert.equal(await clients.deleteClient!(client.clientId), true);
      assert.equal(await saveUnder(store, client, copy.revision), false, 'saved under a copy of a deleted integration');
      // Registered again as registerClient would: a secret and a creation moment of its own.
      const { client: again } = buildClient({ clientId: client.clientId, flow: 'client_credentials', redirectUris: [], createdAt: secondsFromNow(0) });
      assert.equal(await clients.createClient(again), true);
      assert.equal(await saveUnder(store, client, copy.revision), false, 'saved under a copy of the integration its id had before');
    },
  },
];
