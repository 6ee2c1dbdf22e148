// Conformance rules for what is not there: unknown ids read as null or not_found, never undefined.
import { describe, expect, it } from 'vitest';
import type { GetStore } from './conformance-fixtures.js';

/**
 * Registers the "absent" rules: every `find*` resolves `null` (not `undefined`) for an unknown id,
 * `consumeCode` reports `not_found`, lists are empty arrays, and every method returns a promise.
 * @see RFC 6749 §5.2 (`invalid_grant`, `invalid_client` are what the router makes of these).
 */
export function describeAbsentRules(getStore: GetStore): void {
  describe('unknown ids', () => {
    it('findClient resolves null (never undefined) for an unknown clientId', async () => {
      expect(await getStore().clients.findClient('no-such-client')).toBeNull();
    });

    it('findAccessToken resolves null (never undefined) for an unknown token hash', async () => {
      expect(await getStore().tokens.findAccessToken('no-such-token')).toBeNull();
    });

    it('findRefreshToken resolves null (never undefined) for an unknown token hash', async () => {
      expect(await getStore().tokens.findRefreshToken('no-such-token')).toBeNull();
    });

    it('findConsent resolves null (never undefined) for an unknown user and client', async () => {
      expect(await getStore().consents.findConsent('no-such-user', 'no-such-client')).toBeNull();
    });

    it('consumeCode resolves { kind: "not_found" } for an unknown code hash', async () => {
      expect(await getStore().codes.consumeCode('no-such-code')).toEqual({ kind: 'not_found' });
    });

    it('listClients resolves an empty array on an empty store', async () => {
      expect(await getStore().clients.listClients()).toEqual([]);
    });

    it('listConsents resolves an empty array for a user without consents', async () => {
      expect(await getStore().consents.listConsents('no-such-user')).toEqual([]);
    });

    it('revoke methods resolve for unknown ids (idempotent, nothing to remove)', async () => {
      const { tokens, consents } = getStore();
      // Void methods: only that they resolve is checked, not what with.
      await tokens.revokeAccessToken('no-such-token');
      await tokens.revokeGrant('no-such-grant');
      await tokens.revokeClientTokens('no-such-client');
      await tokens.revokeClientTokens('no-such-client', 'no-such-user');
      await consents.revokeConsent('no-such-user', 'no-such-client');
    });

    it('every read method returns a promise (async, never a synchronous answer)', async () => {
      const { clients, codes, tokens, consents } = getStore();
      const calls: readonly unknown[] = [
        clients.findClient('x'),
        clients.listClients(),
        codes.consumeCode('x'),
        tokens.findAccessToken('x'),
        tokens.findRefreshToken('x'),
        consents.findConsent('x', 'y'),
        consents.listConsents('x'),
      ];
      for (const call of calls) expect(call).toBeInstanceOf(Promise);
      await Promise.all(calls);
    });
  });
}
