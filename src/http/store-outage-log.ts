// The log of a store outage: one line per interval with the failures held back counted by cause, and its end.
import type { Logger } from '../options.js';
import { ERROR_LOG_MAX_KINDS, STORE_ERROR_LOG_INTERVAL_MS } from './error-log-interval.js';

/** Per logger and source: the outage lines written, and the failures held back since the last line. */
interface OutageLog {
  /** performance.now() of the lines: the interval is a duration, which a wall clock stepped back (NTP) would stretch. */
  loggedAt: number;
  recoveredAt: number;
  /** Failures held back since the last line, per cause (the outage's message), in the order first seen. */
  readonly held: Map<string, number>;
  heldTotal: number;
  /** An outage was logged or counted since the last "available again" line: the store's end of it is still unsaid. */
  pending: boolean;
}

const storeLogs = new WeakMap<Logger, OutageLog>();
/** A UserAuth hook's outage is the host's directory, not the store: its lines are throttled apart and its end not said. */
const hookLogs = new WeakMap<Logger, OutageLog>();
let pendingLogs = 0;
/** The cause the held-back failures are counted under once ERROR_LOG_MAX_KINDS causes are held: memory stays bounded. */
const OTHER_CAUSES = 'other causes';

/**
 * True while some logger has a store outage whose end is unsaid. The places where a request has just been answered
 * by the store test it before calling `logStoreAvailable`: one branch on the hot paths when nothing is pending.
 */
export let storeRecoveryPending = false;

/** ` (and N more since the last such line)`, with the count per cause when any of them is not `cause`. */
function heldBack(log: OutageLog, cause: string): string {
  if (log.heldTotal === 0) return '';
  const byCause = log.held.size === 1 && log.held.has(cause) ? '' : `: ${perCause(log)}`;
  return ` (and ${log.heldTotal} more since the last such line${byCause})`;
}

/** `3 × <cause>, 2 × <cause>`: what the held-back failures were, so a count is never told under another cause. */
function perCause(log: OutageLog): string {
  return [...log.held].map(([cause, count]) => `${count} × ${cause}`).join(', ');
}

/** Forgets the failures held back: they have just been reported on a line. */
function clearHeld(log: OutageLog): void {
  log.held.clear();
  log.heldTotal = 0;
}

/**
 * Logs a store outage (`store unavailable: <message>`) at most once per STORE_ERROR_LOG_INTERVAL_MS per logger; the
 * failures between are counted per cause (up to ERROR_LOG_MAX_KINDS causes, the rest as `other causes`) and
 * reported on the next line, so an ECONNREFUSED count is not told under a later timeout. `fromStore` false: a UserAuth
 * hook's outage, throttled apart and never announced as ended by a store's answer.
 * @see README, `logger` option; RFC 6749 §4.1.2.1, §5.2 (the 503 `temporarily_unavailable` answer itself).
 */
export function logStoreUnavailable(logger: Logger, message: string, fromStore: boolean): void {
  const logs = fromStore ? storeLogs : hookLogs;
  let log = logs.get(logger);
  if (!log) logs.set(logger, (log = { loggedAt: -Infinity, recoveredAt: -Infinity, held: new Map(), heldTotal: 0, pending: false }));
  if (fromStore && !log.pending) {
    log.pending = true;
    pendingLogs += 1;
    storeRecoveryPending = true;
  }
  const now = performance.now();
  if (now - log.loggedAt < STORE_ERROR_LOG_INTERVAL_MS) {
    const cause = log.held.has(message) || log.held.size < ERROR_LOG_MAX_KINDS - 1 ? message : OTHER_CAUSES;
    log.held.set(cause, (log.held.get(cause) ?? 0) + 1);
    log.heldTotal += 1;
    return;
  }
  const more = heldBack(log, message);
  log.loggedAt = now;
  clearHeld(log);
  logger.error(`express-oauth-router: store unavailable: ${message}${more}`);
}

/**
 * Called when the store has just answered a request (a token issued, an access token looked up, a readiness probe)
 * while `storeRecoveryPending`: writes `store available again after N failed requests since the last line: …` once,
 * then at most once per STORE_ERROR_LOG_INTERVAL_MS while the store flaps, so the operator sees an outage end and
 * the failures its last line did not count. The next outage is then logged at once.
 * @see README, `logger` option.
 */
export function logStoreAvailable(logger: Logger): void {
  const log = storeLogs.get(logger);
  if (!log?.pending) return;
  const now = performance.now();
  if (now - log.recoveredAt < STORE_ERROR_LOG_INTERVAL_MS) return;
  const failed = log.heldTotal === 0
    ? '; no request failed since the last line'
    : ` after ${log.heldTotal} failed request${log.heldTotal === 1 ? '' : 's'} since the last line: ${perCause(log)}`;
  log.recoveredAt = now;
  log.loggedAt = -Infinity;
  log.pending = false;
  clearHeld(log);
  pendingLogs -= 1;
  storeRecoveryPending = pendingLogs > 0;
  // A warning, not an error: alerts on error lines should not fire on the end of an outage.
  logger.warn(`express-oauth-router: store available again${failed}`);
}
