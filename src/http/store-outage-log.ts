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

/**
 * Where a router's lines go: its options, whose logger writes them. `createOAuthRouter` binds its store to them, so
 * routers on one store that share a logger (both default to `console`) share its outage's lines, and a router on
 * another store neither says that outage ended when its own store answers nor restarts its throttle.
 */
export interface OutageSource {
  readonly logger: Logger;
}

/** Per logger, per store (the logger itself for a source bound to none): a store's outage lines. */
const storeLogs = new WeakMap<Logger, WeakMap<object, OutageLog>>();
/** A UserAuth hook's outage is the host's directory, not the store: its lines are throttled apart and its end not said. */
const hookLogs = new WeakMap<Logger, OutageLog>();
const boundStores = new WeakMap<OutageSource, object>();
/** The cause the held-back failures are counted under once ERROR_LOG_MAX_KINDS causes are held: memory stays bounded. */
const OTHER_CAUSES = 'other causes';

/** What a router's hot paths read of its store's outage log: whether its end is still unsaid. */
export interface StoreOutage {
  readonly pending: boolean;
}

/** ` (and N more since the last such line)`, with the count per cause when any of them is not `cause`. */
function heldBack(log: OutageLog, cause: string): string {
  if (log.heldTotal === 0) return '';
  const byCause = log.held.size === 1 && log.held.has(cause) ? '' : `: ${perCause(log)}`;
  return ` (and ${log.heldTotal} more since the last such line${byCause})`;
}

/** Ties a router's outage lines to its store: called once by `createOAuthRouter`, before `storeOutageOf`. */
export function bindOutageStore(source: OutageSource, store: object): void {
  boundStores.set(source, store);
}

/**
 * The outage log of a source's store (after `bindOutageStore`), made now if need be, for the places where a request
 * has just been answered by the store: they test its `pending` before calling `logStoreAvailable`, one property read on
 * the hot paths when nothing is pending. It is the router's own (shared with the routers on its logger and store), not
 * a count for the whole process: a router thrown away during its store's outage (a tenant removed) takes its pending
 * outage with it, rather than leaving every other router to look for an end to announce on every request.
 */
export function storeOutageOf(source: OutageSource): StoreOutage {
  return storeLogOf(source, true)!;
}

/** The outage log of a source's store (its logger's own, without a bound store); `create` makes a missing one. */
function storeLogOf(source: OutageSource, create: boolean): OutageLog | undefined {
  let byStore = storeLogs.get(source.logger);
  if (!byStore) {
    if (!create) return undefined;
    storeLogs.set(source.logger, (byStore = new WeakMap()));
  }
  const key = boundStores.get(source) ?? source.logger;
  let log = byStore.get(key);
  if (!log && create) byStore.set(key, (log = newOutageLog()));
  return log;
}

function newOutageLog(): OutageLog {
  return { loggedAt: -Infinity, recoveredAt: -Infinity, held: new Map(), heldTotal: 0, pending: false };
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
 * Logs a store outage (`store unavailable: <message>`) at most once per STORE_ERROR_LOG_INTERVAL_MS per logger and store; the
 * failures between are counted per cause (up to ERROR_LOG_MAX_KINDS causes, the rest as `other causes`) and
 * reported on the next line, so an ECONNREFUSED count is not told under a later timeout. `fromStore` false: a UserAuth
 * hook's outage, throttled apart and never announced as ended by a store's answer.
 * @see README, `logger` option; RFC 6749 §4.1.2.1, §5.2 (the 503 `temporarily_unavailable` answer itself).
 */
export function logStoreUnavailable(source: OutageSource, message: string, fromStore: boolean): void {
  const { logger } = source;
  let log = fromStore ? storeLogOf(source, true)! : hookLogs.get(logger);
  if (!log) hookLogs.set(logger, (log = newOutageLog()));
  if (fromStore) log.pending = true;
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
 * while its outage is `pending` (`storeOutageOf`): writes `store available again after N failed requests since the
 * last line: …` once, then at most once per STORE_ERROR_LOG_INTERVAL_MS while the store flaps, so the operator sees an
 * outage end and the failures its last line did not count. The next outage is then logged at once.
 * @see README, `logger` option.
 */
export function logStoreAvailable(source: OutageSource): void {
  const log = storeLogOf(source, false);
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
  // A warning, not an error: alerts on error lines should not fire on the end of an outage.
  source.logger.warn(`express-oauth-router: store available again${failed}`);
}
