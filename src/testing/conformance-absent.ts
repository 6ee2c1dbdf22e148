// Conformance rules for what is not there: unknown ids read as null or not_found, never undefined.
import assert from 'node:assert/strict';
import type { Store } from '../stores/contract.js';
import type { ConformanceRule } from './conformance-types.js';
import { freshId } from './conformance-ids.js';
import { everyMethodCall } from './every-method-call.js';

/** Calls every method the store has, with unknown ids or fresh records; each must return a thenable. */
function callEveryMethod(store: Store): [string, unknown][] {
  return everyMethodCall(store).map(([name, call]) => [name, call()]);
}

/**
 * The "absent" rules of the required tier: every `find*` resolves `null` (never `undefined`) for an
 * unknown id, `consumeCode` reports `not_found`, revocations of unknown ids resolve, and every method
 * answers with a promise.
 * @see RFC 6749 §5.2 (`invalid_grant`, `invalid_client` are what the router makes of these).
 */
export const absentRules: readonly ConformanceRule[] = [
  {
    tier: 'required',
    name: 'findClient resolves null (never undefined) for an unknown clientId',
    async run({ store }) {
      assert.equal(await store.clients.findClient(freshId()), null);
    },
  },
  {
    tier: 'required',
    name: 'findAccessToken resolves null (never undefined) for an unknown token hash',
    async run({ store }) {
      assert.equal(await store.tokens.findAccessToken(freshId()), null);
    },
  },
  {
    tier: 'required',
    name: 'findRefreshToken resolves null (never undefined) for an unknown token hash',
    async run({ store }) {
      assert.equal(await store.tokens.findRefreshToken(freshId()), null);
    },
  },
  {
    tier: 'required',
    name: 'consumeCode resolves { kind: "not_found" } for an unknown code hash',
    async run({ store }) {
      assert.deepEqual(await store.codes.consumeCode(freshId()), { kind: 'not_found' });
    },
  },
  {
    tier: 'required',
    name: 'revokeAccessToken and revokeGrant resolve for unknown ids (idempotent, nothing to remove)',
    async run({ store }) {
      // Void methods: only that they resolve is checked, not what with.
      await store.tokens.revokeAccessToken(freshId());
      await store.tokens.revokeGrant(freshId());
      await store.tokens.revokeGrant(freshId());
    },
  },
  {
    tier: 'required',
    name: 'every method answers with a promise (async, never a synchronous answer or a synchronous throw)',
    async run({ store }) {
      const answers = callEveryMethod(store);
      for (const [name, answer] of answers) {
        const thenable = typeof (answer as { then?: unknown } | null)?.then === 'function';
        assert.ok(thenable, `store.${name} returned ${String(answer)} instead of a promise`);
      }
      await Promise.all(answers.map(([, answer]) => answer));
    },
  },
];
