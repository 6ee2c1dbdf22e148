// Refuses a change from a machine whose clock is off from the store server's: the revocation moments it records would be too.
import type { Store } from '../stores/contract.js';
import { STORE_POLICY } from '../stores/store-policy.js';
import { CliError, EXIT_FAILURE } from './cli-error.js';

/** `2 h 0 min`, `5 min 3 s`, `2.5 s`: how far apart, for the operator. */
function formatSpan(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  const minutes = Math.round(ms / 60_000);
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What a change from a clock ahead, or behind, would do: the reason the refusal gives. */
export interface ClockEffect {
  readonly ahead: string;
  readonly behind: string;
}

const REVOCATION_EFFECT: ClockEffect = {
  ahead: "a revocation recorded by it would refuse the integration's new tokens on every instance for that long",
  behind: 'a revocation recorded by it would let codes issued in that span before it still be exchanged',
};

/**
 * Before a command changes anything: reads the clock of the server that keeps the tokens (`store.backendTime`)
 * and refuses (exit 1, `clock_skew`) when this machine's is more than `STORE_POLICY.maxClockSkewMs` (1 s) off it. Every change
 * takes this machine's `Date.now()`: a revocation's moment (`tokens revoke`, `disable`, `delete`, `rotate-secret`,
 * a narrowing `update`) is compared by every instance with the moment their tokens were authorized, so one from a
 * clock S ahead refuses the integration's new tokens for S (and stays, as the store keeps the latest moment), and
 * one from a clock S behind lets a code issued in the S before it be exchanged. A store without `backendTime`
 * (SQLite: a file on this machine, read by this clock) is not checked.
 * @see RFC 7009 §2.1 (a revocation counts from then on), RFC 6749 §4.1.2 (codes are short-lived).
 * @throws CliError `clock_skew` when the clocks differ; `StoreUnavailableError` when the server cannot be read.
 */
export async function checkClock(store: Store, effect: ClockEffect = REVOCATION_EFFECT): Promise<void> {
  if (typeof store.backendTime !== 'function') return;
  const sent = Date.now();
  const server = (await store.backendTime()).getTime();
  const answered = Date.now();
  // A store that answers no instant must not pass for one in step (every comparison with NaN is false).
  if (!Number.isFinite(server)) throw new Error('the store\'s backendTime() resolved no valid date; its server\'s clock cannot be checked');
  // The server read its clock somewhere between our two readings: only outside that span (widened by the bound) is it off.
  const bound = STORE_POLICY.maxClockSkewMs;
  const ahead = sent - server;
  const behind = server - answered;
  if (ahead <= bound && behind <= bound) return;
  const mine = new Date(Math.round((sent + answered) / 2)).toISOString();
  const theirs = new Date(server).toISOString();
  const what = ahead > bound ? `${formatSpan(ahead)} ahead: ${effect.ahead}` : `${formatSpan(behind)} behind: ${effect.behind}`;
  throw new CliError(
    `this machine's clock reads ${mine} and the store's server reads ${theirs}: this clock is ${what}. ` +
      `Nothing was changed; set this machine's clock (NTP), or run oauth-admin where the clock is within ${STORE_POLICY.maxClockSkewMs / 1000} s of the server's`,
    EXIT_FAILURE,
    'clock_skew',
  );
}
