// Tells the SQLite store's logger when its timed sweep starts failing, and when it works again: one line each, not one per run.
import type { StoreWarningLogger } from '../console-store-logger.js';
import { describeStoreError } from '../describe-store-error.js';

/** What the store reports of its sweep's runs. @see createSweepLog. */
export interface SqliteSweepLog {
  /** A timed run failed (no caller saw it): logged when it starts a streak of failed runs, or changes its cause. */
  failed(error: unknown): void;
  /** A run finished: after failed ones, one line saying so, with how many failed. */
  succeeded(): void;
}

/**
 * The sweep's log, throttled as the PostgreSQL and Redis stores throttle their feeds' and connections' lines: once per
 * outage (a `reported` flag), not once per retry. A lock another process holds for an hour (a slow backup) fails every
 * run after `lockTimeoutMs`; one line says so, with the error, and one says when a run got through again, counting
 * the runs that failed. A run that fails for another cause (the lock gone, the disk failing) is a line of its own,
 * since the first line no longer tells what is wrong. The error is handed on as the stores' other warnings are (the
 * default logger prints its message and code only, `consoleStoreLogger`): a SQLite message names the failure, never a
 * row's values, so no token hash or secret reaches the log.
 * @see RFC 6749 §10.5, RFC 7009 §2.1 (what the sweep deletes), RFC 6819 §5.1.4.1.1 (no secrets in logs).
 */
export function createSweepLog(logger: StoreWarningLogger): SqliteSweepLog {
  let failedRuns = 0;
  /** The cause of the last line written in this streak, as the default logger would print it. */
  let loggedCause: string | null = null;
  return {
    failed(error) {
      failedRuns += 1;
      const { message, code } = describeStoreError(error);
      const cause = `${message} (${code ?? ''})`;
      if (cause === loggedCause) return;
      loggedCause = cause;
      logger.warn('express-oauth-router: SQLite sweep of expired rows failed; the next sweep tries again', error);
    },
    succeeded() {
      if (failedRuns === 0) return;
      logger.warn(`express-oauth-router: SQLite sweep of expired rows done again after ${failedRuns} failed run${failedRuns === 1 ? '' : 's'}`);
      failedRuns = 0;
      loggedCause = null;
    },
  };
}
