// Conformance rule for backendTime: the tokens server's clock, as an instant, in step with this machine's.
import assert from 'node:assert/strict';
import { STORE_POLICY } from '../stores/store-policy.js';
import type { ConformanceRule } from './conformance-types.js';

/**
 * The rule of `Store.backendTime`, which runs only when the store has it. `oauth-admin` compares its clock with
 * this one before it records a revocation moment, so it must be the server's own clock, read on each call, as a
 * `Date` to the millisecond: one that answered a cached time, or its own process's clock, would let a machine whose
 * clock is off record moments (the rule cannot tell the latter apart; it is the store's to get right). The suite's machine and the store's server are expected in step (NTP), as every
 * instance of a deployment is; a failure here on a correct store means they are not.
 * @see RFC 7009 §2.1 (a revocation counts from then on).
 */
export const backendTimeRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    needs: ['store.backendTime'],
    name: `backendTime resolves the server's time now as a Date, within ${STORE_POLICY.maxClockSkewMs} ms of this machine's clock`,
    async run({ store }) {
      const sent = Date.now();
      const first = await store.backendTime!();
      const answered = Date.now();
      assert.ok(first instanceof Date && Number.isFinite(first.getTime()), `backendTime resolved ${String(first)}, not a valid Date`);
      const server = first.getTime();
      const bound = STORE_POLICY.maxClockSkewMs;
      assert.ok(
        server >= sent - bound && server <= answered + bound,
        `backendTime read ${first.toISOString()} between ${new Date(sent).toISOString()} and ${new Date(answered).toISOString()} here: ` +
          `more than ${bound} ms apart (keep the server's clock and this machine's in step, and answer the time as the server reads it)`,
      );
    },
  },
];
