// How often the router's logger may repeat a line about the same kind of failure, and how many kinds it remembers.

/**
 * A kind of failure (a store outage, an unexpected error of one name and message) is logged at most once per this
 * many ms per logger; the occurrences between are counted into its next line. README, `logger` option.
 */
export const STORE_ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * How many kinds of failure a logger's throttle remembers at once: past it the oldest is forgotten (and logged as new
 * when it comes back), so messages that differ per request cannot grow memory without bound. README, `logger` option.
 */
export const ERROR_LOG_MAX_KINDS = 100;
