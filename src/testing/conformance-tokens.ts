// Conformance rules for access and refresh tokens: round trip, expiry, revocation by token and by grant.
import assert from 'node:assert/strict';
import type { ConformanceRule } from './conformance-types.js';
import {
  buildToken,
  buildTokenPair,
  findable,
  justExpired,
  momentAfterNow,
  saveTokens,
  secondsFromNow,
} from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';

/**
 * The TokenStore rules of the required tier.
 * @see RFC 6749 §1.4, §1.5 (access and refresh tokens), §4.1.2 (replay revokes the grant's tokens),
 * §10.4 (refresh token protection), RFC 7009 §2.1 (revocation), RFC 6750 §3.1 (`invalid_token`).
 */
export const tokenRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: 'saveTokens stores an access and a refresh token that round-trip every field, Dates as Dates',
    async run({ store }) {
      const { access, refresh } = buildTokenPair();
      assert.equal(await saveTokens(store, access, refresh), true);
      const foundAccess = await store.tokens.findAccessToken(access.tokenHash);
      const foundRefresh = await store.tokens.findRefreshToken(refresh.tokenHash);
      assert.deepEqual(foundAccess, access);
      assert.deepEqual(foundRefresh, refresh);
      assert.ok(foundAccess?.expiresAt instanceof Date && foundRefresh?.expiresAt instanceof Date, 'expiresAt must be a Date');
      assert.equal(foundAccess.expiresAt.getTime(), access.expiresAt.getTime());
      assert.equal(foundRefresh.expiresAt.getTime(), refresh.expiresAt.getTime());
    },
  },
  {
    tier: 'required',
    name: 'saveTokens with refresh null stores only the access token',
    async run({ store }) {
      const access = buildToken();
      assert.equal(await saveTokens(store, access, null), true);
      assert.deepEqual(await store.tokens.findAccessToken(access.tokenHash), access);
      assert.equal(await store.tokens.findRefreshToken(access.tokenHash), null);
    },
  },
  {
    tier: 'required',
    name: 'a client_credentials token round-trips userId null and an empty scope',
    async run({ store }) {
      const access = buildToken({ userId: null, scope: [] });
      assert.equal(await saveTokens(store, access, null), true);
      assert.deepEqual(await store.tokens.findAccessToken(access.tokenHash), access);
    },
  },
  {
    tier: 'required',
    name: 'findAccessToken never returns a refresh token, nor findRefreshToken an access token',
    async run({ store }) {
      const { access, refresh } = buildTokenPair();
      await saveTokens(store, access, refresh);
      assert.equal(await store.tokens.findAccessToken(refresh.tokenHash), null);
      assert.equal(await store.tokens.findRefreshToken(access.tokenHash), null);
    },
  },
  {
    tier: 'required',
    name: 'tokens whose expiresAt is past read as null',
    async run({ store }) {
      const { access, refresh } = buildTokenPair({ expiresAt: justExpired() });
      assert.equal(await saveTokens(store, access, refresh), true);
      assert.deepEqual(await findable(store, [access], [refresh]), [false, false]);
    },
  },
  {
    tier: 'required',
    name: 'an expired access token does not hide the live refresh token of its grant',
    async run({ store }) {
      const { access, refresh } = buildTokenPair();
      await saveTokens(store, { ...access, expiresAt: justExpired() }, refresh);
      assert.equal(await store.tokens.findAccessToken(access.tokenHash), null);
      assert.deepEqual(await store.tokens.findRefreshToken(refresh.tokenHash), refresh);
    },
  },
  {
    tier: 'required',
    name: 'revokeGrant removes every access and refresh token of the grant and nothing of other grants',
    async run({ store }) {
      const first = buildTokenPair();
      const again = buildTokenPair({ grantId: first.access.grantId, clientId: first.access.clientId });
      const other = buildTokenPair({ clientId: first.access.clientId });
      for (const pair of [first, again, other]) await saveTokens(store, pair.access, pair.refresh);
      await store.tokens.revokeGrant(first.access.grantId);
      assert.deepEqual(await findable(store, [first.access, again.access], [first.refresh, again.refresh]), [false, false, false, false]);
      assert.deepEqual(await findable(store, [other.access], [other.refresh]), [true, true]);
    },
  },
  {
    tier: 'required',
    name: 'after revokeGrant, saveTokens for that grant resolves false and saves nothing, whatever its authorizedAt',
    async run({ store }) {
      const access = buildToken();
      await store.tokens.revokeGrant(access.grantId);
      const later = await momentAfterNow();
      for (const authorizedAt of [secondsFromNow(-60), later, secondsFromNow(3600)]) {
        const pair = buildTokenPair({ grantId: access.grantId, clientId: access.clientId });
        assert.equal(await saveTokens(store, pair.access, pair.refresh, authorizedAt), false, `authorizedAt ${authorizedAt.toISOString()}`);
        assert.equal(await saveTokens(store, buildToken({ grantId: access.grantId }), null, authorizedAt), false);
        assert.deepEqual(await findable(store, [pair.access], [pair.refresh]), [false, false]);
      }
      // Another grant of the same integration and user is untouched.
      assert.equal(await saveTokens(store, buildToken({ clientId: access.clientId }), null, secondsFromNow(-60)), true);
    },
  },
  {
    tier: 'required',
    name: 'a save with newGrant round-trips, and revokeGrant of its grant removes it and refuses the grant from then on',
    async run({ store }) {
      const access = buildToken({ userId: null });
      assert.equal(await store.tokens.saveTokens(access, null, { authorizedAt: new Date(), newGrant: true }), true);
      assert.deepEqual(await store.tokens.findAccessToken(access.tokenHash), access);
      await store.tokens.revokeGrant(access.grantId);
      assert.deepEqual(await findable(store, [access], []), [false]);
      assert.equal(await saveTokens(store, buildToken({ grantId: access.grantId }), null), false);
    },
  },
  {
    tier: 'required',
    name: 'newGrant is a hint, not a pass: a save with newGrant of a grant already revoked resolves false and saves nothing',
    async run({ store }) {
      const grantId = freshId('grant');
      await store.tokens.revokeGrant(grantId);
      const access = buildToken({ grantId, userId: null });
      assert.equal(await store.tokens.saveTokens(access, null, { authorizedAt: new Date(), newGrant: true }), false);
      const pair = buildTokenPair({ grantId });
      assert.equal(await store.tokens.saveTokens(pair.access, pair.refresh, { authorizedAt: new Date(), newGrant: true }), false);
      assert.deepEqual(await findable(store, [access, pair.access], [pair.refresh]), [false, false, false]);
    },
  },
  {
    tier: 'required',
    name: 'revokeGrant is idempotent',
    async run({ store }) {
      const { access, refresh } = buildTokenPair();
      await saveTokens(store, access, refresh);
      await store.tokens.revokeGrant(access.grantId);
      await store.tokens.revokeGrant(access.grantId);
      assert.deepEqual(await findable(store, [access], [refresh]), [false, false]);
      assert.equal(await saveTokens(store, buildToken({ grantId: access.grantId }), null), false);
    },
  },
  {
    tier: 'required',
    name: 'a revocation that revokes nothing new does not resolve true (a second revokeAccessToken or revokeGrant), and a first one does not resolve false',
    async run({ store }) {
      // The router reports a revocation unless the store answers false (token.revoked): true for a second call would
      // report it twice, false for the first would leave it unreported. Nothing (undefined) is always allowed.
      const { access, refresh } = buildTokenPair();
      await saveTokens(store, access, refresh);
      assert.notEqual(await store.tokens.revokeAccessToken(access.tokenHash), false, 'revokeAccessToken of a live access token resolved false');
      assert.notEqual(await store.tokens.revokeAccessToken(access.tokenHash), true, 'revokeAccessToken of a removed access token resolved true');
      assert.notEqual(await store.tokens.revokeGrant(access.grantId), false, 'the first revokeGrant of a grant resolved false');
      assert.notEqual(await store.tokens.revokeGrant(access.grantId), true, 'revokeGrant of a grant revoked before resolved true');
    },
  },
  {
    tier: 'required',
    name: 'revokeAccessToken removes only that access token, and is idempotent',
    async run({ store }) {
      const first = buildTokenPair();
      const again = buildTokenPair({ grantId: first.access.grantId, clientId: first.access.clientId });
      for (const pair of [first, again]) await saveTokens(store, pair.access, pair.refresh);
      await store.tokens.revokeAccessToken(first.access.tokenHash);
      await store.tokens.revokeAccessToken(first.access.tokenHash);
      assert.deepEqual(await findable(store, [first.access, again.access], [first.refresh, again.refresh]), [false, true, true, true]);
    },
  },
  {
    tier: 'required',
    name: "revokeAccessToken given a refresh token's hash changes nothing (a refresh token dies with its grant)",
    async run({ store }) {
      const { access, refresh } = buildTokenPair();
      await saveTokens(store, access, refresh);
      await store.tokens.revokeAccessToken(refresh.tokenHash);
      assert.deepEqual(await findable(store, [access], [refresh]), [true, true]);
      // Nor is the grant revoked: it can still be refreshed.
      assert.equal(await saveTokens(store, buildToken({ grantId: access.grantId, clientId: access.clientId }), null), true);
    },
  },
];
