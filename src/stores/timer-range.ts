// The longest delay Node's timers can wait, and the check that keeps a configured duration within it.

/**
 * setTimeout's largest delay, 2^31 − 1 ms (about 24.8 days). A longer one is not clamped to it but set to 1 ms
 * with a TimeoutOverflowWarning, on every Node version: a sweep re-armed with it would run back to back, a
 * deadline would expire at once. Sockets' `setTimeout` (node-redis's `socketTimeout`) has the same bound.
 * @see https://nodejs.org/api/timers.html#settimeoutcallback-delay-args ("larger than 2147483647 … set to 1")
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Throws unless `value`, in `unit`, still fits a timer once multiplied by `factor`, the largest multiple of it the
 * store arms (twice a query timeout as its deadline, three times a command timeout as the socket timeout).
 * @throws TypeError naming `option` and the largest value allowed.
 * @see RFC 6749 §10.5 (the sweeps purge short-lived codes and expired tokens on this timer).
 */
export function checkTimerRange(option: string, value: number, unit: 'seconds' | 'milliseconds', factor = 1): void {
  const msPerUnit = unit === 'seconds' ? 1000 : 1;
  const max = Math.floor(MAX_TIMER_MS / (msPerUnit * factor));
  if (value > max) {
    throw new TypeError(
      `${option} must be at most ${max} ${unit} (got ${value}): Node's timers wait at most 2^31 − 1 ms (about 24.8 days), `
        + 'and a longer one fires after 1 ms',
    );
  }
}
