// Reads a grace period given on the command line: seconds, or a number with s, m, h or d.
import { CliError, EXIT_USAGE } from './cli-error.js';

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * `3600`, `90s`, `30m`, `12h` or `7d` → whole seconds.
 * @throws CliError (usage, exit 2) for anything else. @see RFC 6819 §5.2.3.7 (secret rotation).
 */
export function parseDuration(text: string, option: string): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!match) throw new CliError(`${option} must be seconds or a number with s, m, h or d (e.g. 7d), not ${JSON.stringify(text)}`, EXIT_USAGE);
  return Number(match[1]) * UNIT_SECONDS[match[2] || 's']!;
}
