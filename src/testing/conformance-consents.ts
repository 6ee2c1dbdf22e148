// Conformance rules for consents: round trip, upsert by (user, client), revoke, and per-user listing.
import { describe, expect, it } from 'vitest';
import { buildConsent, secondsFromNow, type GetStore } from './conformance-fixtures.js';

/**
 * Registers the ConsentStore rules.
 * @see RFC 6749 §4.1.1 (the resource owner grants or denies the request), §10.2 (client impersonation).
 */
export function describeConsentRules(getStore: GetStore): void {
  describe('consents', () => {
    it('saveConsent then findConsent round-trips every field, with grantedAt as a Date', async () => {
      const consent = buildConsent();
      await getStore().consents.saveConsent(consent);
      const found = await getStore().consents.findConsent(consent.userId, consent.clientId);
      expect(found).toEqual(consent);
      expect(found?.grantedAt).toBeInstanceOf(Date);
      expect(found?.grantedAt.getTime()).toBe(consent.grantedAt.getTime());
    });

    it('a consent with an empty scope round-trips scope []', async () => {
      const consent = buildConsent({ scope: [] });
      await getStore().consents.saveConsent(consent);
      expect(await getStore().consents.findConsent(consent.userId, consent.clientId)).toEqual(consent);
    });

    it('saveConsent for the same user and client replaces the consent (upsert)', async () => {
      const consent = buildConsent();
      await getStore().consents.saveConsent(consent);
      const widened = { ...consent, scope: ['envelopes:read', 'envelopes:write'], grantedAt: secondsFromNow(0) };
      await getStore().consents.saveConsent(widened);
      expect(await getStore().consents.findConsent(consent.userId, consent.clientId)).toEqual(widened);
      expect(await getStore().consents.listConsents(consent.userId)).toEqual([widened]);
    });

    it('revokeConsent removes only that user and client pair, and is idempotent', async () => {
      const target = buildConsent({ userId: 'alice' });
      const sameUser = buildConsent({ userId: 'alice' });
      const sameClient = buildConsent({ userId: 'bob', clientId: target.clientId });
      for (const consent of [target, sameUser, sameClient]) await getStore().consents.saveConsent(consent);
      await getStore().consents.revokeConsent('alice', target.clientId);
      await getStore().consents.revokeConsent('alice', target.clientId);
      expect(await getStore().consents.findConsent('alice', target.clientId)).toBeNull();
      expect(await getStore().consents.findConsent('alice', sameUser.clientId)).toEqual(sameUser);
      expect(await getStore().consents.findConsent('bob', target.clientId)).toEqual(sameClient);
    });

    it("listConsents returns only that user's consents, ordered by grantedAt", async () => {
      const newest = buildConsent({ userId: 'alice', grantedAt: secondsFromNow(-10) });
      const oldest = buildConsent({ userId: 'alice', grantedAt: secondsFromNow(-300) });
      const middle = buildConsent({ userId: 'alice', grantedAt: secondsFromNow(-100) });
      const bobs = buildConsent({ userId: 'bob', grantedAt: secondsFromNow(-200) });
      for (const consent of [newest, bobs, oldest, middle]) await getStore().consents.saveConsent(consent);
      const listed = await getStore().consents.listConsents('alice');
      expect(listed).toEqual([oldest, middle, newest]);
      for (const consent of listed) expect(consent.grantedAt).toBeInstanceOf(Date);
    });
  });
}
