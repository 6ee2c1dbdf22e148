// saveTokens of a refresh token that is not of the access token's grant, integration and user: every built-in store refuses the call alike.
import { describe, expect, it } from 'vitest';
import type { TokenRecord } from '../../src/stores/contract.js';
import { buildTokenPair } from '../../src/testing/conformance-fixtures.js';
import { builtInStores } from '../helpers/built-in-stores.js';

const MISMATCHES: ReadonlyArray<readonly [string, Partial<TokenRecord>]> = [
  ['grant', { grantId: 'another-grant' }],
  ['integration', { clientId: 'another-integration' }],
  ['user', { userId: 'another-user' }],
];

describe.each(builtInStores('token_pair'))('saveTokens of the %s store (RFC 6749 §6: a refresh token belongs to one grant)', (_name, available, open) => {
  it.skipIf(!available)('refuses a refresh token of another grant, integration or user with a TypeError, and saves neither token', async () => {
    const opened = await open();
    try {
      for (const [, change] of MISMATCHES) {
        const { access, refresh } = buildTokenPair();
        const stray = { ...refresh, ...change };
        await expect(opened.store.tokens.saveTokens(access, stray, { authorizedAt: new Date() })).rejects.toThrow(
          new TypeError('saveTokens: the access and refresh token must share their grant, integration and user'),
        );
        expect(await opened.store.tokens.findAccessToken(access.tokenHash)).toBeNull();
        expect(await opened.store.tokens.findRefreshToken(stray.tokenHash)).toBeNull();
      }
      // The pair as the router builds it is saved, and judged once for both tokens.
      const { access, refresh } = buildTokenPair();
      expect(await opened.store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
      expect(await opened.store.tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
      await opened.store.tokens.revokeGrant(access.grantId);
      const again = buildTokenPair({ grantId: access.grantId, clientId: access.clientId, userId: access.userId });
      expect(await opened.store.tokens.saveTokens(again.access, again.refresh, { authorizedAt: new Date() })).toBe(false);
      expect(await opened.store.tokens.findRefreshToken(again.refresh.tokenHash)).toBeNull();
    } finally {
      await opened.dispose();
    }
  });
});
