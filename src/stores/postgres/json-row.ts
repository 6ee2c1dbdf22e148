// Records read as one JSON text column: decoded by position, whatever type parsers the host's pool has.

/** A column of a JSON row: its SQL expression, and `'ms'` for a timestamptz read as epoch milliseconds. */
export type JsonColumn = string | readonly [expression: string, as: 'ms'];

/**
 * The select-list expression of `columns` as one JSON array in text. A timestamptz becomes whole epoch ms
 * (rounded down, as a JS Date holds it); text, text[] and booleans become their JSON values; NULL is null.
 *
 * Why not the columns themselves: node-postgres converts each column through the pool's type parsers, which a
 * host may have replaced for its own queries (timestamps kept as strings, say), and one text column is also what
 * it reads fastest: each column otherwise costs a field description per answer and a parser per value (the
 * integration's 13 columns were about a tenth of a token request's instructions, BENCHMARKS.md, eleventh pass).
 */
export function jsonRowSql(columns: readonly JsonColumn[]): string {
  const values = columns.map((column) =>
    typeof column === 'string' ? column : `floor(extract(epoch FROM ${column[0]}) * 1000)::bigint`,
  );
  return `json_build_array(${values.join(', ')})::text`;
}

/** The values of a row that `jsonRowSql` wrote, in column order. @throws TypeError if `text` is not one. */
export function parseJsonRow(text: unknown): readonly unknown[] {
  const values: unknown = typeof text === 'string' ? JSON.parse(text) : undefined;
  if (!Array.isArray(values)) throw new TypeError('PostgreSQL store: a record column did not hold a JSON array');
  return values;
}

/** A `'ms'` value of a JSON row as a Date. */
export function dateOf(value: unknown): Date {
  return new Date(value as number);
}
