// The race disableClient and enableClient rules share: N calls on one integration, exactly one reports the change.
import assert from 'node:assert/strict';
import type { Store } from '../stores/contract.js';
import type { RuleContext } from './conformance-types.js';
import { buildClient } from './conformance-fixtures.js';
import { freshId } from './conformance-ids.js';
import { administration } from './conformance-parts.js';
import { RACERS } from './conformance-races.js';
import { describeRound, forEachRound, race } from './interleave.js';

/** One of the two atomic status changes, by the method that makes it. */
export type StatusChange = 'disableClient' | 'enableClient';

/** What each change resolves when it made the change and when the status was already so, and the flag it leaves. */
const OUTCOMES = {
  disableClient: { made: 'disabled', already: 'already_disabled', disabled: true, calls: 'disables', before: 'enabled' },
  enableClient: { made: 'enabled', already: 'already_enabled', disabled: false, calls: 'enables', before: 'disabled' },
} as const;

/**
 * Races RACERS calls of `change` on one integration in the other status, the first through `first`, the others through
 * `others`, in every interleaving, and checks that exactly one reports having made the change: the admin API's
 * `client.disabled` or `client.enabled` is then published once however many instances (or retried `oauth-admin`
 * commands) run at once.
 * @see RFC 6749 §2.3.1 (client authentication), RFC 7009 §2.1.
 */
export async function raceStatusChange(context: RuleContext, change: StatusChange, first: Store, others: Store, across: string): Promise<void> {
  const { made, already, disabled, calls, before } = OUTCOMES[change];
  const call = (store: Store, clientId: string) => administration(store).clients[change]!(clientId);
  await forEachRound(context.rounds, async (round, schedule) => {
    const where = describeRound(round, schedule);
    const { client } = buildClient({ clientId: freshId('client'), disabled: !disabled });
    await administration(first).clients.createClient(client);
    const [one, rest] = await race(
      () => call(first, client.clientId),
      () => Promise.all(Array.from({ length: RACERS - 1 }, () => call(others, client.clientId))),
      schedule,
    );
    const outcomes = [one, ...rest];
    const won = outcomes.filter((outcome) => outcome === made).length;
    assert.equal(won, 1, `${where}: ${won} of ${outcomes.length} ${calls} found the integration ${before} (${outcomes.join(', ')}); ${across}`);
    assert.ok(outcomes.every((outcome) => outcome === made || outcome === already), `${where}: ${outcomes.join(', ')}`);
    assert.equal((await first.clients.findClient(client.clientId))?.disabled, disabled, where);
  });
}
