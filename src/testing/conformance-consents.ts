// Conformance rules for consents: round trip, upsert by (user, client), revoke, listing, and exact ids.
import assert from 'node:assert/strict';
import type { ConformanceRule } from './conformance-types.js';
import { buildConsent, secondsFromNow } from './conformance-fixtures.js';
import { freshId, longestId, nearTwins, nonAsciiUserId, splitPairs } from './conformance-ids.js';
import { consentsOf } from './conformance-parts.js';

/**
 * The ConsentStore rules (consents tier).
 * @see RFC 6749 §4.1.1 (the resource owner grants or denies the request), §10.2 (client impersonation).
 */
export const consentRules: readonly ConformanceRule[] = [
  {
    tier: 'consents',
    name: 'findConsent resolves null (never undefined) for an unknown user and client',
    async run({ store }) {
      assert.equal(await consentsOf(store).findConsent(freshId('user'), freshId('client')), null);
    },
  },
  {
    tier: 'consents',
    name: 'listConsents resolves an empty array for a user without consents',
    async run({ store }) {
      assert.deepEqual(await consentsOf(store).listConsents(freshId('user')), []);
    },
  },
  {
    tier: 'consents',
    name: 'saveConsent then findConsent round-trips every field, with grantedAt as a Date',
    async run({ store }) {
      const consents = consentsOf(store);
      const consent = buildConsent();
      await consents.saveConsent(consent);
      const found = await consents.findConsent(consent.userId, consent.clientId);
      assert.deepEqual(found, consent);
      assert.ok(found?.grantedAt instanceof Date, 'grantedAt must be a Date');
      assert.equal(found.grantedAt.getTime(), consent.grantedAt.getTime());
    },
  },
  {
    tier: 'consents',
    name: 'a consent with an empty scope round-trips scope []',
    async run({ store }) {
      const consents = consentsOf(store);
      const consent = buildConsent({ scope: [] });
      await consents.saveConsent(consent);
      assert.deepEqual(await consents.findConsent(consent.userId, consent.clientId), consent);
    },
  },
  {
    tier: 'consents',
    name: 'saveConsent for the same user and client replaces the consent (upsert)',
    async run({ store }) {
      const consents = consentsOf(store);
      const consent = buildConsent();
      await consents.saveConsent(consent);
      const widened = { ...consent, scope: ['envelopes:read', 'envelopes:write'], grantedAt: secondsFromNow(0) };
      await consents.saveConsent(widened);
      assert.deepEqual(await consents.findConsent(consent.userId, consent.clientId), widened);
      assert.deepEqual(await consents.listConsents(consent.userId), [widened]);
    },
  },
  {
    tier: 'consents',
    name: 'revokeConsent removes only that user and client pair, and is idempotent',
    async run({ store }) {
      const consents = consentsOf(store);
      const target = buildConsent({ userId: 'alice' });
      const sameUser = buildConsent({ userId: 'alice' });
      const sameClient = buildConsent({ userId: 'bob', clientId: target.clientId });
      for (const consent of [target, sameUser, sameClient]) await consents.saveConsent(consent);
      await consents.revokeConsent('alice', target.clientId);
      await consents.revokeConsent('alice', target.clientId);
      await consents.revokeConsent(freshId('user'), freshId('client'));
      assert.equal(await consents.findConsent('alice', target.clientId), null);
      assert.deepEqual(await consents.findConsent('alice', sameUser.clientId), sameUser);
      assert.deepEqual(await consents.findConsent('bob', target.clientId), sameClient);
    },
  },
  {
    tier: 'consents',
    name: "listConsents returns only that user's consents, ordered by grantedAt, then clientId in binary order ('B' before 'a', U+FF21 before U+1F600)",
    async run({ store }) {
      const consents = consentsOf(store);
      const tie = secondsFromNow(-100);
      const suffix = freshId('').slice(1);
      const newest = buildConsent({ userId: 'alice', grantedAt: secondsFromNow(-10) });
      const oldest = buildConsent({ userId: 'alice', grantedAt: secondsFromNow(-300) });
      const [A, B, a, b, wide, emoji] = ['A', 'B', 'a', 'b', '\uFF21', '\u{1F600}']
        .map((p) => buildConsent({ userId: 'alice', clientId: `${p}${suffix}`, grantedAt: tie }));
      const bobs = buildConsent({ userId: 'bob', grantedAt: secondsFromNow(-200) });
      for (const consent of [newest, emoji, b, bobs, a, wide, oldest, B, A]) await consents.saveConsent(consent!);
      const listed = await consents.listConsents('alice');
      assert.deepEqual(listed, [oldest, A, B, a, b, wide, emoji, newest]);
      for (const consent of listed) assert.ok(consent.grantedAt instanceof Date, 'grantedAt must be a Date');
    },
  },
  {
    tier: 'consents',
    name: 'consents compare user and client ids exactly: ids differing only in case or by a trailing space are other records',
    async run({ store }) {
      const consents = consentsOf(store);
      const consent = buildConsent({ userId: freshId('User'), clientId: freshId('Client') });
      await consents.saveConsent(consent);
      const twins = [
        ...nearTwins(consent.userId).map((userId) => ({ ...consent, userId, scope: [`for:${userId}`] })),
        ...nearTwins(consent.clientId).map((clientId) => ({ ...consent, clientId, scope: [`for:${clientId}`] })),
      ];
      for (const twin of twins) {
        assert.equal(await consents.findConsent(twin.userId, twin.clientId), null, `found under ${JSON.stringify([twin.userId, twin.clientId])}`);
        assert.deepEqual(await consents.listConsents(twin.userId), twin.userId === consent.userId ? [consent] : []);
      }
      for (const twin of twins) await consents.saveConsent(twin);
      await consents.revokeConsent(twins[0]!.userId, twins[0]!.clientId);
      assert.deepEqual(await consents.findConsent(consent.userId, consent.clientId), consent);
      for (const twin of twins.slice(1)) assert.deepEqual(await consents.findConsent(twin.userId, twin.clientId), twin);
    },
  },
  {
    tier: 'consents',
    name: "consents keep apart (user, client) pairs whose ids join to the same string: ('X:a', 'b') is not ('X', 'a:b')",
    async run({ store }) {
      const consents = consentsOf(store);
      for (const { separator, one, other } of splitPairs()) {
        const label = `${JSON.stringify(one)} and ${JSON.stringify(other)} (joined by ${JSON.stringify(separator)})`;
        const first = buildConsent({ userId: one[0], clientId: one[1], scope: ['first'] });
        await consents.saveConsent(first);
        assert.equal(await consents.findConsent(other[0], other[1]), null, `${label}: one found under the other`);
        const second = buildConsent({ userId: other[0], clientId: other[1], scope: ['second'] });
        await consents.saveConsent(second);
        assert.deepEqual(await consents.findConsent(one[0], one[1]), first, `${label}: saving one replaced the other`);
        await consents.revokeConsent(other[0], other[1]);
        assert.deepEqual(await consents.findConsent(one[0], one[1]), first, `${label}: revoking one removed the other`);
        assert.equal(await consents.findConsent(other[0], other[1]), null);
      }
    },
  },
  {
    tier: 'consents',
    name: 'consents keep user and client ids of STORE_POLICY.maxIdLength characters, and non-ASCII user ids, exactly',
    async run({ store }) {
      const consents = consentsOf(store);
      const saved = [
        buildConsent({ userId: longestId('User'), clientId: longestId('Client') }),
        buildConsent({ userId: nonAsciiUserId() }),
      ];
      for (const consent of saved) {
        await consents.saveConsent(consent);
        assert.deepEqual(await consents.findConsent(consent.userId, consent.clientId), consent);
        assert.deepEqual(await consents.listConsents(consent.userId), [consent]);
      }
    },
  },
];
