// The stores' default logger (one line on stderr per warning, never an error object), and the guard every store puts on a host's.
import { describeStoreError } from './describe-store-error.js';

/** Where a store reports what it cannot throw: background failures, connections lost. */
export interface StoreWarningLogger {
  warn(message: string, error?: unknown): void;
}

/**
 * The PostgreSQL and Redis stores' logger when none is given: `console.warn` with one line,
 * `MESSAGE: ERROR-MESSAGE (CODE)`. Handing `console` the error itself would print the whole object (for
 * node-postgres, its connection with the cancel `secretKey`) over many lines, which line-based log
 * collectors split into garbage and which must never reach a log.
 * @see describeStoreError
 */
export const consoleStoreLogger: StoreWarningLogger = {
  warn(message, error) {
    if (error === undefined) {
      console.warn(message);
      return;
    }
    const { message: text, code } = describeStoreError(error);
    console.warn(`${message}: ${text}${code === undefined ? '' : ` (${code})`}`);
  },
};

/**
 * The host's logger as a store calls it: from timers, socket 'error' listeners and detached promises, where a
 * `warn` that throws would end the host (an uncaught exception, an unhandled rejection) over a line of log. What it
 * throws is dropped: there is nothing else to tell it to.
 */
export function guardStoreLogger(given: StoreWarningLogger | undefined): StoreWarningLogger {
  const logger = given ?? consoleStoreLogger;
  return {
    warn(message, error) {
      try {
        logger.warn(message, error);
      } catch {
        // Dropped, as the doc says.
      }
    },
  };
}
