// Conformance rules for authorization codes: round trip, expiry, and atomic single use under concurrency.
import { describe, expect, it } from 'vitest';
import { buildCode, buildTokenPair, justExpired, type GetStore } from './conformance-fixtures.js';

/** How many redemptions of one code race in the concurrency rule. */
const RACERS = 20;

/**
 * Registers the CodeStore rules. RFC 6749 §4.1.2: "The client MUST NOT use the authorization code more
 * than once. If an authorization code is used more than once, the authorization server MUST deny the
 * request and SHOULD revoke (when possible) all tokens previously issued based on that authorization code."
 * @see RFC 6749 §4.1.2, §10.5.
 */
export function describeCodeRules(getStore: GetStore): void {
  describe('codes', () => {
    it('consumeCode of a saved code is consumed with the full record, Dates as Date objects', async () => {
      const code = buildCode();
      await getStore().codes.saveCode(code);
      const result = await getStore().codes.consumeCode(code.codeHash);
      expect(result).toEqual({ kind: 'consumed', record: code });
      if (result.kind !== 'consumed') throw new Error('unreachable');
      expect(result.record.expiresAt).toBeInstanceOf(Date);
      expect(result.record.expiresAt.getTime()).toBe(code.expiresAt.getTime());
    });

    it('a code without PKCE and with an empty scope round-trips codeChallenge null and scope []', async () => {
      const code = buildCode({ codeChallenge: null, scope: [] });
      await getStore().codes.saveCode(code);
      expect(await getStore().codes.consumeCode(code.codeHash)).toEqual({ kind: 'consumed', record: code });
    });

    it('a code whose expiresAt is past reads as not_found', async () => {
      const code = buildCode({ expiresAt: justExpired() });
      await getStore().codes.saveCode(code);
      expect(await getStore().codes.consumeCode(code.codeHash)).toEqual({ kind: 'not_found' });
    });

    it(`of ${RACERS} concurrent consumeCode calls exactly one is consumed and the rest replayed with the grantId`, async () => {
      const code = buildCode();
      await getStore().codes.saveCode(code);
      const results = await Promise.all(
        Array.from({ length: RACERS }, () => getStore().codes.consumeCode(code.codeHash)),
      );
      const consumed = results.filter((r) => r.kind === 'consumed');
      const replayed = results.filter((r) => r.kind === 'replayed');
      expect(consumed).toEqual([{ kind: 'consumed', record: code }]);
      expect(replayed).toHaveLength(RACERS - 1);
      for (const r of replayed) expect(r).toEqual({ kind: 'replayed', grantId: code.grantId });
      const later = await getStore().codes.consumeCode(code.codeHash);
      expect(later).toEqual({ kind: 'replayed', grantId: code.grantId });
    });

    it('consuming one code leaves other codes unconsumed', async () => {
      const first = buildCode();
      const second = buildCode({ grantId: first.grantId });
      await getStore().codes.saveCode(first);
      await getStore().codes.saveCode(second);
      expect((await getStore().codes.consumeCode(first.codeHash)).kind).toBe('consumed');
      expect(await getStore().codes.consumeCode(second.codeHash)).toEqual({ kind: 'consumed', record: second });
    });

    it('a consumed code still reads as replayed after its grant is revoked (until it expires)', async () => {
      const code = buildCode();
      await getStore().codes.saveCode(code);
      await getStore().codes.consumeCode(code.codeHash);
      const { access, refresh } = buildTokenPair({ grantId: code.grantId, clientId: code.clientId });
      expect(await getStore().tokens.saveTokens(access, refresh)).toBe(true);
      await getStore().tokens.revokeGrant(code.grantId);
      expect(await getStore().codes.consumeCode(code.codeHash)).toEqual({
        kind: 'replayed',
        grantId: code.grantId,
      });
    });
  });
}
