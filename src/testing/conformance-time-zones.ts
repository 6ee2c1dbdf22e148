// Conformance rule for time zones: a Date saved under one process zone reads back, and expires, the same under another.
import assert from 'node:assert/strict';
import type { ConformanceRule } from './conformance-types.js';
import { buildCode, buildToken, buildTokenPair, findable, justExpired, saveTokens } from './conformance-fixtures.js';

/**
 * Two zones far apart, with offsets that are not whole hours (UTC+12:45 or +13:45, UTC−3:30 or −2:30): a store
 * that keeps local wall-clock time (mysql2's default `timezone: 'local'` on a `DATETIME` column) reads every
 * date 16 to 17 hours off, and one that rounds offsets to hours shows it too.
 */
const WRITE_ZONE = 'Pacific/Chatham';
const READ_ZONE = 'America/St_Johns';

/** Runs `use` with `process.env.TZ` set to `zone` (Node applies it to every Date at once), then restores it. */
async function inZone<T>(zone: string, use: () => Promise<T>): Promise<T> {
  const before = process.env.TZ;
  process.env.TZ = zone;
  try {
    return await use();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

/**
 * The time-zone rule: an instant is an instant. Instances of one deployment may run in different zones, and every
 * instance crosses daylight-saving changes; a store whose dates depend on the process's zone passes every other
 * rule on a machine in one zone (a CI runner in UTC) and then reads codes and tokens hours off, an expired token
 * as live among them.
 * @see RFC 6749 §4.1.2 (codes expire), RFC 6750 §3.1 (an expired token is `invalid_token`), RFC 3339 §4.
 */
export const timeZoneRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: "dates do not depend on the process's time zone: a code and tokens saved under one zone read back, and expire, the same under another",
    async run({ store }) {
      const code = buildCode();
      const { access, refresh } = buildTokenPair();
      const expired = buildToken({ expiresAt: justExpired() });
      await inZone(WRITE_ZONE, async () => {
        await store.codes.saveCode(code);
        assert.equal(await saveTokens(store, access, refresh), true);
        assert.equal(await saveTokens(store, expired, null), true);
      });
      await inZone(READ_ZONE, async () => {
        const where = `saved with TZ=${WRITE_ZONE}, read with TZ=${READ_ZONE}`;
        assert.deepEqual(await store.codes.consumeCode(code.codeHash), { kind: 'consumed', record: code }, `${where}: keep instants (UTC, epoch milliseconds), not local wall-clock time`);
        assert.deepEqual(await store.tokens.findAccessToken(access.tokenHash), access, where);
        assert.deepEqual(await store.tokens.findRefreshToken(refresh.tokenHash), refresh, where);
        assert.deepEqual(await findable(store, [expired]), [false], `${where}: an expired token read as live`);
      });
    },
  },
];
