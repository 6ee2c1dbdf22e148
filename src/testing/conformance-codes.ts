// Conformance rules for authorization codes: round trip, expiry, and single use (the race is in conformance-races).
import assert from 'node:assert/strict';
import type { AuthorizationCodeRecord, ConsumeResult } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { buildCode, buildTokenPair, justExpired, saveTokens } from './conformance-fixtures.js';

/**
 * Asserts a replay's answer: the code's grant, and its user and integration when the store gives them (optional in
 * the contract, so a store that leaves them out still passes; one that gives another user or integration does not).
 * @see RFC 6749 §4.1.2.
 */
export function assertReplayed(result: ConsumeResult<AuthorizationCodeRecord>, code: AuthorizationCodeRecord, where?: string): void {
  const given = result.kind === 'replayed' ? result : {};
  const expected = {
    kind: 'replayed', grantId: code.grantId,
    ...('userId' in given ? { userId: code.userId } : {}),
    ...('clientId' in given ? { clientId: code.clientId } : {}),
  };
  assert.deepEqual(result, expected, where);
}

/**
 * The CodeStore rules (required tier). RFC 6749 §4.1.2: "The client MUST NOT use the authorization code
 * more than once. If an authorization code is used more than once, the authorization server MUST deny the
 * request and SHOULD revoke (when possible) all tokens previously issued based on that authorization code."
 * @see RFC 6749 §4.1.2, §10.5.
 */
export const codeRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: 'consumeCode of a saved code is consumed with the full record, issuedAt and expiresAt as Dates to the millisecond',
    async run({ store }) {
      const code = buildCode();
      await store.codes.saveCode(code);
      const result = await store.codes.consumeCode(code.codeHash);
      assert.deepEqual(result, { kind: 'consumed', record: code });
      assert.ok(result.kind === 'consumed');
      assert.ok(result.record.issuedAt instanceof Date, 'issuedAt must be a Date');
      assert.equal(result.record.issuedAt.getTime(), code.issuedAt.getTime());
      assert.ok(result.record.expiresAt instanceof Date, 'expiresAt must be a Date');
      assert.equal(result.record.expiresAt.getTime(), code.expiresAt.getTime());
    },
  },
  {
    tier: 'required',
    name: 'a code without PKCE and with an empty scope round-trips codeChallenge null and scope []',
    async run({ store }) {
      const code = buildCode({ codeChallenge: null, scope: [] });
      await store.codes.saveCode(code);
      assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'consumed', record: code });
    },
  },
  {
    tier: 'required',
    name: 'a code whose expiresAt is past reads as not_found',
    async run({ store }) {
      const code = buildCode({ expiresAt: justExpired() });
      await store.codes.saveCode(code);
      assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'not_found' });
    },
  },
  {
    tier: 'required',
    name: 'a consumed code reads as replayed, with its grantId (and its userId and clientId, if given), to every later consumeCode until it expires',
    async run({ store }) {
      const code = buildCode();
      await store.codes.saveCode(code);
      assert.equal((await store.codes.consumeCode(code.codeHash)).kind, 'consumed');
      for (let i = 0; i < 3; i++) {
        assertReplayed(await store.codes.consumeCode(code.codeHash), code);
      }
    },
  },
  {
    tier: 'required',
    name: 'consuming one code leaves other codes, even of the same grant, unconsumed',
    async run({ store }) {
      const first = buildCode();
      const second = buildCode({ grantId: first.grantId, clientId: first.clientId });
      await store.codes.saveCode(first);
      await store.codes.saveCode(second);
      assert.equal((await store.codes.consumeCode(first.codeHash)).kind, 'consumed');
      assert.deepEqual(await store.codes.consumeCode(second.codeHash), { kind: 'consumed', record: second });
    },
  },
  {
    tier: 'required',
    name: 'a consumed code still reads as replayed after its grant is revoked (until it expires)',
    async run({ store }) {
      const code = buildCode();
      await store.codes.saveCode(code);
      await store.codes.consumeCode(code.codeHash);
      const { access, refresh } = buildTokenPair({ grantId: code.grantId, clientId: code.clientId });
      assert.equal(await saveTokens(store, access, refresh, code.issuedAt), true);
      await store.tokens.revokeGrant(code.grantId);
      assertReplayed(await store.codes.consumeCode(code.codeHash), code);
    },
  },
];
