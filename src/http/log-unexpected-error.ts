// Logs an unexpected error (a 500) once per kind per interval, so a missing schema or a store's bug is not a line a request.
import type { Logger } from '../options.js';
import { ERROR_LOG_MAX_KINDS, STORE_ERROR_LOG_INTERVAL_MS } from './error-log-interval.js';

/** Per kind (name and message): when its last line was written, and how many came since without a line. */
interface KindLog {
  loggedAt: number;
  since: number;
}

/** Per logger, its kinds in the order their last lines were written (a Map keeps insertion order). */
const kindLogs = new WeakMap<Logger, Map<string, KindLog>>();

/**
 * Writes `express-oauth-router: unexpected <name>: <message>` at the first occurrence of that name and message, and
 * at the first after STORE_ERROR_LOG_INTERVAL_MS with ` (and N more since the last such line)`; the ones between are
 * only counted. A dropped schema answered 60 requests with 60 identical lines; the metrics still count each 500.
 * @see README, `logger` option; RFC 6749 §5.2 (server_error: the answer itself is unchanged).
 */
export function logUnexpectedError(logger: Logger, name: string, message: string): void {
  // The monotonic clock: a wall clock stepped back (NTP) would hold every repeat back for as long as the step.
  const now = performance.now();
  let kinds = kindLogs.get(logger);
  if (!kinds) kindLogs.set(logger, (kinds = new Map()));
  const kind = `${name}: ${message}`;
  const last = kinds.get(kind);
  if (last && now - last.loggedAt < STORE_ERROR_LOG_INTERVAL_MS) {
    last.since += 1;
    return;
  }
  if (last) {
    // Moved to the end, so the first entry is always the kind logged longest ago: the one to forget when full.
    kinds.delete(kind);
  } else if (kinds.size >= ERROR_LOG_MAX_KINDS) {
    kinds.delete(kinds.keys().next().value!);
  }
  kinds.set(kind, { loggedAt: now, since: 0 });
  const more = last && last.since > 0 ? ` (and ${last.since} more since the last such line)` : '';
  logger.error(`express-oauth-router: unexpected ${kind}${more}`);
}
