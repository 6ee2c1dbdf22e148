// A Date as the ISO 8601 text the save function's JSON items carry, without V8's printf-based toISOString.

const DAY_MS = 86_400_000;
/** 1000-01-01T00:00:00.000Z and 10000-01-01T00:00:00.000Z: the years toISOString writes with four digits. */
const FIRST_MS = -30_610_224_000_000;
const END_MS = 253_402_300_800_000;

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * `date.toISOString()`, character for character. V8 formats it through its date cache and `snprintf`: about 7.2k
 * instructions a call, and a PostgreSQL save sends four (27k of a code exchange's 1,000k, BENCHMARKS.md,
 * eighteenth pass). This computes the civil date from the day number (H. Hinnant's `civil_from_days`) in integer
 * arithmetic. Years outside 1000–9999 (a six-digit or signed year) and invalid dates (a RangeError) are left to
 * toISOString itself.
 * @see ECMA-262 §21.4.1.32 (the Date Time String Format), RFC 3339 §5.6 (what timestamptz input reads).
 */
export function isoTimestamp(date: Date): string {
  const ms = date.getTime();
  if (!(ms >= FIRST_MS && ms < END_MS)) return date.toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  // Days since 0000-03-01, in 400-year eras of 146,097 days: March first puts February's leap day last.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  const fraction = millis < 10 ? `00${millis}` : millis < 100 ? `0${millis}` : `${millis}`;
  return `${year}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${fraction}Z`;
}
