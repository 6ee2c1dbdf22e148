// Conformance rules for exact ids in codes, tokens and integrations: no case folding, no space padding, long ids.
import assert from 'node:assert/strict';
import type { ConformanceRule } from './conformance-types.js';
import { buildClient, buildCode, buildToken, buildTokenPair, findable, saveTokens } from './conformance-fixtures.js';
import { freshId, lastCharacterTwins, longestId, nearTwins, nonAsciiUserId, splitPairs } from './conformance-ids.js';
import { administration, revokeClientTokensOf } from './conformance-parts.js';

/**
 * The exact-id rules for codes, tokens and integrations. A store on a case-insensitive or space-padding
 * collation (MySQL's and MariaDB's defaults) finds `'abc'` under `'ABC'` or `'abc '`: an integration, a
 * token or a consent could then be reached under an id nobody issued. (Consents and kids: in their files.)
 * @see RFC 6749 §2.2 (client identifiers are unique strings), RFC 3986 §6.2.1 (simple string comparison).
 */
export const exactIdRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: 'codes compare codeHash exactly: hashes differing only in case or by a trailing space are other codes',
    async run({ store }) {
      const code = buildCode({ codeHash: freshId('Code') });
      await store.codes.saveCode(code);
      const twins = nearTwins(code.codeHash).map((codeHash) => buildCode({ codeHash }));
      for (const twin of twins) assert.deepEqual(await store.codes.consumeCode(twin.codeHash), { kind: 'not_found' }, `consumed under ${JSON.stringify(twin.codeHash)}`);
      for (const twin of twins) await store.codes.saveCode(twin);
      for (const saved of [code, ...twins]) assert.deepEqual(await store.codes.consumeCode(saved.codeHash), { kind: 'consumed', record: saved });
    },
  },
  {
    tier: 'required',
    name: 'tokens compare tokenHash exactly: hashes differing only in case or by a trailing space are other tokens',
    async run({ store }) {
      const { access, refresh } = buildTokenPair({ tokenHash: freshId('Token') });
      const refreshKept = { ...refresh, tokenHash: freshId('Refresh') };
      await saveTokens(store, access, refreshKept);
      for (const tokenHash of nearTwins(access.tokenHash)) assert.equal(await store.tokens.findAccessToken(tokenHash), null, `found under ${JSON.stringify(tokenHash)}`);
      for (const tokenHash of nearTwins(refreshKept.tokenHash)) assert.equal(await store.tokens.findRefreshToken(tokenHash), null, `found under ${JSON.stringify(tokenHash)}`);
      const twins = nearTwins(access.tokenHash).map((tokenHash) => buildToken({ tokenHash }));
      for (const twin of twins) assert.equal(await saveTokens(store, twin, null), true);
      for (const saved of [access, ...twins]) assert.deepEqual(await store.tokens.findAccessToken(saved.tokenHash), saved);
      await store.tokens.revokeAccessToken(twins[0]!.tokenHash);
      assert.deepEqual(await findable(store, [access, ...twins]), [true, false, true]);
    },
  },
  {
    tier: 'required',
    name: 'codes and tokens keep their hashes whole: digests differing only in the last character are other codes and tokens',
    async run({ store }) {
      const codes = lastCharacterTwins().map((codeHash) => buildCode({ codeHash }));
      for (const code of codes) await store.codes.saveCode(code);
      for (const code of codes) assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'consumed', record: code }, `code ${code.codeHash}`);
      const refreshHashes = lastCharacterTwins();
      const pairs = lastCharacterTwins().map((tokenHash, n) => {
        const { access, refresh } = buildTokenPair();
        return { access: { ...access, tokenHash }, refresh: { ...refresh, tokenHash: refreshHashes[n]! } };
      });
      for (const pair of pairs) assert.equal(await saveTokens(store, pair.access, pair.refresh), true);
      for (const pair of pairs) {
        assert.deepEqual(await store.tokens.findAccessToken(pair.access.tokenHash), pair.access, `access token ${pair.access.tokenHash}`);
        assert.deepEqual(await store.tokens.findRefreshToken(pair.refresh.tokenHash), pair.refresh, `refresh token ${pair.refresh.tokenHash}`);
      }
      await store.tokens.revokeAccessToken(pairs[0]!.access.tokenHash);
      assert.deepEqual(await findable(store, pairs.map((pair) => pair.access)), [false, true], "revoking one access token removed its twin's");
    },
  },
  {
    tier: 'required',
    name: 'revokeGrant compares grantId exactly: grants differing only in case or by a trailing space are untouched and not refused',
    async run({ store }) {
      const grantId = freshId('Grant');
      const [exact, ...twins] = [grantId, ...nearTwins(grantId)].map((id) => buildTokenPair({ grantId: id }));
      for (const pair of [exact!, ...twins]) await saveTokens(store, pair.access, pair.refresh);
      await store.tokens.revokeGrant(grantId);
      assert.deepEqual(await findable(store, [exact!.access], [exact!.refresh]), [false, false]);
      for (const twin of twins) {
        const label = `grant ${JSON.stringify(twin.access.grantId)}`;
        assert.deepEqual(await findable(store, [twin.access], [twin.refresh]), [true, true], `${label} lost its tokens`);
        assert.equal(await saveTokens(store, buildToken({ grantId: twin.access.grantId }), null), true, `${label} was refused`);
      }
      assert.equal(await saveTokens(store, buildToken({ grantId }), null), false);
    },
  },
  {
    tier: 'required',
    name: 'codes and tokens keep client, user and grant ids of STORE_POLICY.maxIdLength characters, and non-ASCII user ids, exactly',
    async run({ store }) {
      for (const userId of [longestId('User'), nonAsciiUserId()]) {
        const code = buildCode({ clientId: longestId('Client'), userId, grantId: longestId('Grant') });
        await store.codes.saveCode(code);
        assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'consumed', record: code });
        const { access, refresh } = buildTokenPair({ clientId: code.clientId, userId, grantId: code.grantId });
        assert.equal(await saveTokens(store, access, refresh), true);
        assert.deepEqual(await store.tokens.findAccessToken(access.tokenHash), access);
        assert.deepEqual(await store.tokens.findRefreshToken(refresh.tokenHash), refresh);
        await store.tokens.revokeGrant(code.grantId);
        assert.deepEqual(await findable(store, [access], [refresh]), [false, false]);
      }
    },
  },
  {
    tier: 'administration',
    name: 'integrations compare clientId exactly: ids differing only in case or by a trailing space are other integrations',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient({ clientId: freshId('Client') });
      await clients.createClient(client);
      const twinIds = nearTwins(client.clientId);
      for (const clientId of twinIds) {
        assert.equal(await clients.findClient(clientId), null, `found under ${JSON.stringify(clientId)}`);
        assert.equal(await clients.updateClient(clientId, { disabled: true }), null, `updated under ${JSON.stringify(clientId)}`);
      }
      assert.deepEqual(await clients.findClient(client.clientId), client);
      const twins = twinIds.map((clientId) => buildClient({ clientId, name: `Twin ${clientId}`, createdAt: client.createdAt }).client);
      for (const twin of twins) assert.equal(await clients.createClient(twin), true, `${JSON.stringify(twin.clientId)} was taken`);
      for (const saved of [client, ...twins]) assert.deepEqual(await clients.findClient(saved.clientId), saved);
      assert.equal((await clients.listClients()).length, 3);
    },
  },
  {
    tier: 'administration',
    name: 'an integration with a clientId of STORE_POLICY.maxIdLength characters round-trips and updates',
    async run({ store }) {
      const { clients } = administration(store);
      const { client } = buildClient({ clientId: longestId('Client') });
      assert.equal(await clients.createClient(client), true);
      assert.deepEqual(await clients.findClient(client.clientId), client);
      assert.deepEqual(await clients.updateClient(client.clientId, { name: 'Long' }), { ...client, name: 'Long' });
      assert.deepEqual(await clients.listClients(), [{ ...client, name: 'Long' }]);
    },
  },
  {
    tier: 'administration',
    needs: ['store.tokens.revokeClientTokens'],
    name: 'revokeClientTokens compares client and user ids exactly, and matches long and non-ASCII user ids',
    async run({ store }) {
      const revoke = revokeClientTokensOf(store);
      const userId = nonAsciiUserId();
      const pair = buildTokenPair({ clientId: freshId('Client'), userId: freshId('User') });
      const wide = buildTokenPair({ clientId: longestId('Client'), userId });
      for (const p of [pair, wide]) await saveTokens(store, p.access, p.refresh);
      const authorizedBefore = new Date();
      for (const clientId of nearTwins(pair.access.clientId)) await revoke(clientId);
      for (const twinUser of nearTwins(pair.access.userId!)) await revoke(pair.access.clientId, twinUser);
      assert.deepEqual(await findable(store, [pair.access], [pair.refresh]), [true, true], 'revoking a near-twin client or user removed the tokens');
      const sameGrant = buildToken({ grantId: pair.access.grantId, clientId: pair.access.clientId, userId: pair.access.userId });
      assert.equal(await saveTokens(store, sameGrant, null, authorizedBefore), true, 'revoking a near-twin client or user refuses saves');
      await revoke(wide.access.clientId, userId);
      assert.deepEqual(await findable(store, [wide.access], [wide.refresh]), [false, false], 'a long non-ASCII user id was not matched');
    },
  },
  {
    tier: 'administration',
    needs: ['store.tokens.revokeClientTokens'],
    name: "revokeClientTokens(clientId, userId) keeps apart pairs whose ids join to the same string: ('X:a', 'b') is not ('X', 'a:b')",
    async run({ store }) {
      const revoke = revokeClientTokensOf(store);
      const pairs = splitPairs();
      const kept = pairs.map(({ other: [clientId, userId] }) => buildTokenPair({ clientId, userId }));
      for (const pair of kept) await saveTokens(store, pair.access, pair.refresh);
      const authorizedBefore = new Date();
      for (const { one: [clientId, userId] } of pairs) await revoke(clientId, userId);
      for (const [n, { separator, other }] of pairs.entries()) {
        const label = `revoking ${JSON.stringify(pairs[n]!.one)} (joined by ${JSON.stringify(separator)}) reached ${JSON.stringify(other)}`;
        assert.deepEqual(await findable(store, [kept[n]!.access], [kept[n]!.refresh]), [true, true], `${label}: its tokens were removed`);
        const sameGrant = buildToken({ grantId: kept[n]!.access.grantId, clientId: other[0], userId: other[1] });
        assert.equal(await saveTokens(store, sameGrant, null, authorizedBefore), true, `${label}: its saves are refused`);
      }
    },
  },
];
