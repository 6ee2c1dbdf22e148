// Conformance rules for integrations: insert-only create, field-by-field update, binary order, hashed secrets.
import assert from 'node:assert/strict';
import { hashSecret } from '../crypto/hash-secret.js';
import type { ClientChanges, OAuthClient } from '../stores/contract.js';
import { applyClientChanges, CLIENT_CHANGE_FIELDS } from '../stores/store-policy.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildClient, secondsFromNow } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { administration } from './conformance-parts.js';

/** A value for each changeable field that differs from what `buildClient` makes. */
function changeOf(field: keyof ClientChanges): ClientChanges {
  const changes: Required<ClientChanges> = {
    clientSecretHash: hashSecret(freshId()),
    name: 'Renamed integration',
    redirectUris: ['https://other.example.com/cb'],
    allowedScopes: ['envelopes:read'],
    requirePkce: false,
    disabled: true,
    tokenEndpointAuthMethod: 'client_secret_post',
    previousClientSecretHash: hashSecret(freshId()),
    previousClientSecretExpiresAt: new Date(Date.now() + 86_400_000),
  };
  return { [field]: changes[field] };
}

/**
 * The ClientStore rules of the administration tier.
 * @see RFC 6749 §2 (client registration), §2.3.1 (client password), §10.1 (client authentication).
 */
export const clientRules: readonly ConformanceRule[] = [
  {
    tier: 'administration',
    name: 'listClients resolves an empty array on an empty store',
    async run({ store }) {
      assert.deepEqual(await administration(store).clients.listClients(), []);
    },
  },
  {
    tier: 'administration',
    name: 'createClient resolves true, and findClient round-trips every field with Dates as Dates',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient();
      assert.equal(await clients.createClient(client), true);
      const found = await clients.findClient(client.clientId);
      assert.deepEqual(found, client);
      assert.ok(found?.createdAt instanceof Date && found.credentialsIssuedAt instanceof Date, 'dates must be Dates');
      assert.equal(found.createdAt.getTime(), client.createdAt.getTime());
      assert.equal(found.credentialsIssuedAt.getTime(), client.credentialsIssuedAt.getTime());
    },
  },
  {
    tier: 'administration',
    name: 'a client_credentials integration round-trips empty redirectUris and allowedScopes as []',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient({ flow: 'client_credentials', redirectUris: [], allowedScopes: [], requirePkce: false });
      await clients.createClient(client);
      assert.deepEqual(await clients.findClient(client.clientId), client);
    },
  },
  {
    tier: 'administration',
    name: 'createClient with an existing clientId resolves false and changes nothing',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient();
      await clients.createClient(client);
      const { client: intruder } = buildClient({ clientId: client.clientId, name: 'Intruder', disabled: true });
      assert.equal(await clients.createClient(intruder), false);
      assert.deepEqual(await clients.findClient(client.clientId), client);
      assert.deepEqual(await clients.listClients(), [client]);
    },
  },
  {
    tier: 'administration',
    name: 'updateClient changes exactly the fields given, each on its own, and resolves the updated record',
    async run({ store }) {
      const { clients } = administration(store);
      // The previous secret's two fields go together, and a v1 store may ignore them: their own rule checks them.
      for (const field of CLIENT_CHANGE_FIELDS.filter((f) => !f.startsWith('previousClientSecret'))) {
        const { client } = buildClient();
        await clients.createClient(client);
        const changes = changeOf(field);
        const expected: OAuthClient = applyClientChanges(client, changes);
        assert.deepEqual(await clients.updateClient(client.clientId, changes), expected, `updateClient({ ${field} }) resolved`);
        assert.deepEqual(await clients.findClient(client.clientId), expected, `after updateClient({ ${field} })`);
      }
      const { client } = buildClient();
      await clients.createClient(client);
      const several: ClientChanges = { ...changeOf('name'), ...changeOf('disabled'), ...changeOf('redirectUris') };
      assert.deepEqual(await clients.updateClient(client.clientId, several), { ...client, ...several });
    },
  },
  {
    tier: 'administration',
    name: 'tokenEndpointAuthMethod round-trips through createClient, findClient and listClients, and its absence stays absence',
    async run({ store }) {
      const { clients } = administration(store);
      const { client: basic } = buildClient({ tokenEndpointAuthMethod: 'client_secret_basic' });
      const { client: post } = buildClient({ tokenEndpointAuthMethod: 'client_secret_post', createdAt: secondsFromNow(-50) });
      const { client: any } = buildClient({ createdAt: secondsFromNow(-40) });
      for (const client of [basic, post, any]) assert.equal(await clients.createClient(client), true);
      assert.deepEqual(await clients.findClient(basic.clientId), basic);
      assert.deepEqual(await clients.findClient(post.clientId), post);
      const found = await clients.findClient(any.clientId);
      // RFC 7591 §2: an integration without the field accepts every method the server allows. A store that
      // returned null (or undefined as a value) would fail deepEqual; this names the reason.
      assert.ok(found !== null && !('tokenEndpointAuthMethod' in found), 'an absent tokenEndpointAuthMethod must read as absent');
      assert.deepEqual(found, any);
      assert.deepEqual(await clients.listClients(), [basic, post, any]);
    },
  },
  {
    tier: 'administration',
    name: 'updateClient sets tokenEndpointAuthMethod, other changes keep it or its absence, and null removes it',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient();
      await clients.createClient(client);
      const renamed = await clients.updateClient(client.clientId, { name: 'Renamed integration' });
      assert.ok(renamed !== null && !('tokenEndpointAuthMethod' in renamed), 'updating another field made the method appear');
      const restricted = { ...client, name: 'Renamed integration', tokenEndpointAuthMethod: 'client_secret_basic' as const };
      assert.deepEqual(await clients.updateClient(client.clientId, { tokenEndpointAuthMethod: 'client_secret_basic' }), restricted);
      assert.deepEqual(await clients.updateClient(client.clientId, { disabled: true }), { ...restricted, disabled: true });
      assert.deepEqual(await clients.findClient(client.clientId), { ...restricted, disabled: true });
      const lifted = await clients.updateClient(client.clientId, { tokenEndpointAuthMethod: null });
      assert.deepEqual(lifted, { ...client, name: 'Renamed integration', disabled: true });
      const found = await clients.findClient(client.clientId);
      assert.ok(found !== null && !('tokenEndpointAuthMethod' in found), 'tokenEndpointAuthMethod: null must leave the field absent');
      assert.deepEqual(await clients.listClients(), [found]);
    },
  },
  {
    tier: 'administration',
    name: 'updateClient with no fields resolves the record unchanged',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient();
      await clients.createClient(client);
      assert.deepEqual(await clients.updateClient(client.clientId, {}), client);
      assert.deepEqual(await clients.findClient(client.clientId), client);
    },
  },
  {
    tier: 'administration',
    name: 'updateClient of an unknown clientId resolves null and creates nothing',
    async run({ store }) {
      const { clients } = administration(store);
      const clientId = freshId('client');
      assert.equal(await clients.updateClient(clientId, { name: 'Ghost', disabled: true }), null);
      assert.equal(await clients.findClient(clientId), null);
      assert.deepEqual(await clients.listClients(), []);
    },
  },
  {
    tier: 'administration',
    name: "listClients orders by createdAt, then by clientId in binary order ('B' before 'a', U+FF21 before U+1F600)",
    async run({ store }) {
      const { clients } = administration(store);
      const early = secondsFromNow(-300);
      const late = secondsFromNow(-100);
      const suffix = freshId('').slice(1);
      // Binary is the order of the UTF-8 bytes (code points): U+FF21 before U+1F600, where UTF-16 code units put the
      // surrogate pair first.
      const saved = [
        buildClient({ clientId: `\u{1F600}${suffix}`, createdAt: early }).client,
        buildClient({ clientId: `\uFF21${suffix}`, createdAt: early }).client,
        buildClient({ clientId: `b${suffix}`, createdAt: early }).client,
        buildClient({ clientId: `late${suffix}`, createdAt: late }).client,
        buildClient({ clientId: `a${suffix}`, createdAt: early }).client,
        buildClient({ clientId: `B${suffix}`, createdAt: early }).client,
        buildClient({ clientId: `A${suffix}`, createdAt: early }).client,
      ];
      for (const client of saved) await clients.createClient(client);
      const listed = await clients.listClients();
      assert.deepEqual(listed.map((c) => c.clientId), ['A', 'B', 'a', 'b', '\uFF21', '\u{1F600}', 'late'].map((p) => `${p}${suffix}`));
      for (const client of listed) assert.ok(client.createdAt instanceof Date, 'createdAt must be a Date');
    },
  },
  {
    tier: 'administration',
    name: 'the stored client secret hash is never the secret itself',
    async run({ store }) {
      const { clients } = administration(store);
      const { client, secret } = buildClient();
      await clients.createClient(client);
      const found = await clients.findClient(client.clientId);
      assert.notEqual(found?.clientSecretHash, secret);
      assert.equal(found?.clientSecretHash, hashSecret(secret));
      assert.ok(!JSON.stringify(await clients.listClients()).includes(secret), 'listClients shows the secret');
    },
  },
];
