// Parses the --issued-at option: a calendar date, read as UTC midnight, not after today.
import { CliError, EXIT_USAGE } from './cli-error.js';

/**
 * `YYYY-MM-DD` → that day at 00:00:00Z. UTC on purpose: the legacy cutoff (SPEC §9, "before January 15th,
 * 2021") is compared in UTC, and the operator's time zone must not move an integration across it.
 * A date after `now` is refused: credentials cannot have been issued in the future, and such a date is
 * almost always a typo (2012 → 2021) that would silently pick the wrong base address.
 * @throws CliError (exit 2) for anything else, including impossible dates such as 2021-02-30.
 */
export function parseIssuedAt(value: string, now: Date = new Date()): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = match ? new Date(`${value}T00:00:00Z`) : null;
  // Date rolls 2021-02-30 over to March 2nd; the round trip catches that.
  if (!date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
    throw new CliError(`--issued-at must be a date YYYY-MM-DD (read as UTC midnight), got ${JSON.stringify(value)}`, EXIT_USAGE);
  }
  if (date.getTime() > now.getTime()) {
    throw new CliError(
      `--issued-at ${value} is in the future (read as ${value}T00:00:00Z; now is ${now.toISOString()}): ` +
        'give the day the credentials were issued, today at the latest',
      EXIT_USAGE,
    );
  }
  return date;
}
