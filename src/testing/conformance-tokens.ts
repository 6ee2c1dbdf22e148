// Conformance rules for access and refresh tokens: round trip, expiry, grant and client revocation.
import { describe, expect, it } from 'vitest';
import type { TokenRecord } from '../stores/contract.js';
import { buildToken, buildTokenPair, justExpired, type GetStore } from './conformance-fixtures.js';

/**
 * Registers the TokenStore rules.
 * @see RFC 6749 §1.4, §1.5 (access and refresh tokens), §4.1.2 (replay revokes the grant's tokens),
 * §10.4 (refresh token protection), RFC 7009 §2.1 (revocation), RFC 6750 §3.1 (`invalid_token`).
 */
export function describeTokenRules(getStore: GetStore): void {
  /** Whether each token still reads back through the finder of its kind. */
  async function present(access: readonly TokenRecord[], refresh: readonly TokenRecord[]): Promise<boolean[]> {
    const { tokens } = getStore();
    return Promise.all([
      ...access.map(async (t) => (await tokens.findAccessToken(t.tokenHash)) !== null),
      ...refresh.map(async (t) => (await tokens.findRefreshToken(t.tokenHash)) !== null),
    ]);
  }

  describe('tokens', () => {
    it('saveTokens stores an access and a refresh token that round-trip every field, Dates as Dates', async () => {
      const { access, refresh } = buildTokenPair();
      expect(await getStore().tokens.saveTokens(access, refresh)).toBe(true);
      const foundAccess = await getStore().tokens.findAccessToken(access.tokenHash);
      const foundRefresh = await getStore().tokens.findRefreshToken(refresh.tokenHash);
      expect(foundAccess).toEqual(access);
      expect(foundRefresh).toEqual(refresh);
      expect(foundAccess?.expiresAt).toBeInstanceOf(Date);
      expect(foundAccess?.expiresAt.getTime()).toBe(access.expiresAt.getTime());
      expect(foundRefresh?.expiresAt).toBeInstanceOf(Date);
      expect(foundRefresh?.expiresAt.getTime()).toBe(refresh.expiresAt.getTime());
    });

    it('saveTokens with refresh null stores only the access token', async () => {
      const access = buildToken();
      expect(await getStore().tokens.saveTokens(access, null)).toBe(true);
      expect(await getStore().tokens.findAccessToken(access.tokenHash)).toEqual(access);
      expect(await getStore().tokens.findRefreshToken(access.tokenHash)).toBeNull();
    });

    it('a client_credentials token round-trips userId null and an empty scope', async () => {
      const access = buildToken({ userId: null, scope: [] });
      expect(await getStore().tokens.saveTokens(access, null)).toBe(true);
      expect(await getStore().tokens.findAccessToken(access.tokenHash)).toEqual(access);
    });

    it('findAccessToken never returns a refresh token, nor findRefreshToken an access token', async () => {
      const { access, refresh } = buildTokenPair();
      await getStore().tokens.saveTokens(access, refresh);
      expect(await getStore().tokens.findAccessToken(refresh.tokenHash)).toBeNull();
      expect(await getStore().tokens.findRefreshToken(access.tokenHash)).toBeNull();
    });

    it('tokens whose expiresAt is past read as null', async () => {
      const { access, refresh } = buildTokenPair({ expiresAt: justExpired() });
      expect(await getStore().tokens.saveTokens(access, refresh)).toBe(true);
      expect(await getStore().tokens.findAccessToken(access.tokenHash)).toBeNull();
      expect(await getStore().tokens.findRefreshToken(refresh.tokenHash)).toBeNull();
    });

    it('an expired access token does not hide the live refresh token of its grant', async () => {
      const { access, refresh } = buildTokenPair();
      const expired = { ...access, expiresAt: justExpired() };
      await getStore().tokens.saveTokens(expired, refresh);
      expect(await getStore().tokens.findAccessToken(access.tokenHash)).toBeNull();
      expect(await getStore().tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
    });

    it('revokeGrant removes every access and refresh token of the grant and nothing of other grants', async () => {
      const first = buildTokenPair();
      const again = buildTokenPair({ grantId: first.access.grantId, clientId: first.access.clientId });
      const other = buildTokenPair({ clientId: first.access.clientId });
      for (const pair of [first, again, other]) await getStore().tokens.saveTokens(pair.access, pair.refresh);
      await getStore().tokens.revokeGrant(first.access.grantId);
      expect(await present([first.access, again.access], [first.refresh, again.refresh])).toEqual([
        false,
        false,
        false,
        false,
      ]);
      expect(await present([other.access], [other.refresh])).toEqual([true, true]);
    });

    it('after revokeGrant, saveTokens for that grant returns false and stores nothing', async () => {
      const { access, refresh } = buildTokenPair();
      await getStore().tokens.revokeGrant(access.grantId);
      expect(await getStore().tokens.saveTokens(access, refresh)).toBe(false);
      expect(await getStore().tokens.saveTokens({ ...access, tokenHash: `${access.tokenHash}x` }, null)).toBe(false);
      expect(await present([access, { ...access, tokenHash: `${access.tokenHash}x` }], [refresh])).toEqual([
        false,
        false,
        false,
      ]);
    });

    it('revokeGrant is idempotent', async () => {
      const { access, refresh } = buildTokenPair();
      await getStore().tokens.saveTokens(access, refresh);
      await getStore().tokens.revokeGrant(access.grantId);
      await getStore().tokens.revokeGrant(access.grantId);
      expect(await present([access], [refresh])).toEqual([false, false]);
      expect(await getStore().tokens.saveTokens(buildToken({ grantId: access.grantId }), null)).toBe(false);
    });

    it('revokeAccessToken removes only that access token', async () => {
      const first = buildTokenPair();
      const again = buildTokenPair({ grantId: first.access.grantId, clientId: first.access.clientId });
      for (const pair of [first, again]) await getStore().tokens.saveTokens(pair.access, pair.refresh);
      await getStore().tokens.revokeAccessToken(first.access.tokenHash);
      await getStore().tokens.revokeAccessToken(first.access.tokenHash);
      expect(await present([first.access, again.access], [first.refresh, again.refresh])).toEqual([
        false,
        true,
        true,
        true,
      ]);
    });

    it('revokeClientTokens(clientId) removes every token of that client and none of others', async () => {
      const alice = buildTokenPair({ userId: 'alice' });
      const bob = buildTokenPair({ userId: 'bob', clientId: alice.access.clientId });
      const machine = buildToken({ userId: null, clientId: alice.access.clientId });
      const otherClient = buildTokenPair({ userId: 'alice' });
      for (const pair of [alice, bob, otherClient]) await getStore().tokens.saveTokens(pair.access, pair.refresh);
      await getStore().tokens.saveTokens(machine, null);
      await getStore().tokens.revokeClientTokens(alice.access.clientId);
      expect(
        await present([alice.access, bob.access, machine], [alice.refresh, bob.refresh]),
      ).toEqual([false, false, false, false, false]);
      expect(await present([otherClient.access], [otherClient.refresh])).toEqual([true, true]);
    });

    it("revokeClientTokens(clientId, userId) removes only that user's tokens of that client", async () => {
      const alice = buildTokenPair({ userId: 'alice' });
      const bob = buildTokenPair({ userId: 'bob', clientId: alice.access.clientId });
      const machine = buildToken({ userId: null, clientId: alice.access.clientId });
      const aliceElsewhere = buildTokenPair({ userId: 'alice' });
      for (const pair of [alice, bob, aliceElsewhere]) await getStore().tokens.saveTokens(pair.access, pair.refresh);
      await getStore().tokens.saveTokens(machine, null);
      await getStore().tokens.revokeClientTokens(alice.access.clientId, 'alice');
      expect(await present([alice.access], [alice.refresh])).toEqual([false, false]);
      expect(
        await present([bob.access, machine, aliceElsewhere.access], [bob.refresh, aliceElsewhere.refresh]),
      ).toEqual([true, true, true, true, true]);
    });
  });
}
