// A day as a page in another language writes it: "3. März 2026", "٣ مارس ٢٠٢٦".

/**
 * Writes a date's day (UTC, the day its ISO form in `<time datetime>` names) in the language `tag`. English pages keep
 * `YYYY-MM-DD`, as they always showed it.
 * @see ECMA-402 §11 (Intl.DateTimeFormat).
 */
export function dayIn(tag: string): (date: Date) => string {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat(tag, { dateStyle: 'long', timeZone: 'UTC' });
  } catch {
    // A tag no locale stands for (private use, `x-klingon`; grandfathered without a preferred value, `i-default`):
    // `Intl` refuses it, and the page writes the day as the English one does.
    return (date) => date.toISOString().slice(0, 10);
  }
  return (date) => format.format(date);
}
