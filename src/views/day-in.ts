// A day as a page in another language writes it: "3. März 2026", "٣ مارس ٢٠٢٦".

/**
 * Writes a date's day (UTC, the day its ISO form in `<time datetime>` names) in the language `tag`. English pages keep
 * `YYYY-MM-DD`, as they always showed it.
 * @see ECMA-402 §11 (Intl.DateTimeFormat).
 */
export function dayIn(tag: string): (date: Date) => string {
  const format = new Intl.DateTimeFormat(tag, { dateStyle: 'long', timeZone: 'UTC' });
  return (date) => format.format(date);
}
