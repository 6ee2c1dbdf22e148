// Parses an import file, JSON Lines or CSV (RFC 4180), into rows of wire fields with their line numbers.
import { parse } from 'csv-parse/sync';
import { IMPORT_FIELDS, type ImportFields } from './import-row.js';

/** The formats `parseImportFile` reads. */
export type ImportFormat = 'jsonl' | 'csv';

/** One row of the file: its fields, or why they could not be read; `line` is where the row starts (1-based). */
export type ImportRecord =
  | { readonly line: number; readonly fields: ImportFields }
  | { readonly line: number; readonly error: string };

/** The file as a whole cannot be read (a CSV quote left open, an unknown column): no row is usable. */
export class ImportFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportFileError';
  }
}

const LIST_FIELDS = new Set(['redirect_uris', 'scopes']);

/** JSON Lines: one object per line; blank lines are skipped; `null` counts as absent. */
function parseJsonLines(text: string): ImportRecord[] {
  const records: ImportRecord[] = [];
  // A byte-order mark, which some editors write, is not part of the first row.
  (text.startsWith('\uFEFF') ? text.slice(1) : text).split('\n').forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      records.push({ line: index + 1, error: 'not valid JSON' });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      records.push({ line: index + 1, error: 'a row must be a JSON object' });
      return;
    }
    const fields = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
    records.push({ line: index + 1, fields });
  });
  return records;
}

/** A CSV cell as the JSON value the field takes: lists space-separated, booleans `true`/`false`. */
function cellValue(column: string, cell: string): unknown {
  if (LIST_FIELDS.has(column)) return cell.split(/\s+/).filter((item) => item !== '');
  if (column === 'require_pkce') {
    const lower = cell.toLowerCase();
    return lower === 'true' ? true : lower === 'false' ? false : cell;
  }
  return cell;
}

/**
 * What the CSV parser said, without the cell content it quotes (`value is "…"`, `got "…"`): a file whose columns
 * are out of place may hold a secret in any cell, and the import's messages never show one (README).
 */
function csvReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/, value is [\s\S]*$/, '').replace(/got "(?:[^"\\]|\\.)*"/g, 'got a character');
}

/** CSV with a header row naming the columns; an empty cell is an absent field. */
function parseCsv(text: string): ImportRecord[] {
  let rows: { record: string[]; info: { lines: number } }[];
  try {
    rows = parse(text, {
      bom: true, info: true, relax_column_count: true, skip_empty_lines: true, record_delimiter: ['\r\n', '\n'],
    }) as unknown as { record: string[]; info: { lines: number } }[];
  } catch (error) {
    throw new ImportFileError(`not valid CSV: ${csvReason(error)}`);
  }
  const [header, ...body] = rows;
  if (!header) return [];
  const columns = header.record;
  const unknown = columns.filter((c) => !(IMPORT_FIELDS as readonly string[]).includes(c));
  if (unknown.length > 0) {
    throw new ImportFileError(`unknown column ${unknown.map((c) => JSON.stringify(c)).join(', ')} (columns: ${IMPORT_FIELDS.join(', ')})`);
  }
  const repeated = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (repeated.length > 0) throw new ImportFileError(`column ${JSON.stringify(repeated[0])} appears twice`);
  return body.map(({ record, info }) => {
    // info.lines is where the record ends; a quoted cell may span lines.
    const line = info.lines - record.reduce((n, cell) => n + cell.split('\n').length - 1, 0);
    if (record.length !== columns.length) {
      return { line, error: `${record.length} cells where the header has ${columns.length}` };
    }
    const fields: Record<string, unknown> = {};
    columns.forEach((column, i) => {
      if (record[i] !== '') fields[column] = cellValue(column, record[i]!);
    });
    return { line, fields };
  });
}

/**
 * Reads an import file. JSON Lines: one object per line, lists as JSON arrays. CSV (RFC 4180, `,`, `"` quoting,
 * CRLF or LF, optional BOM): a header row of field names, `redirect_uris` and `scopes` space-separated,
 * `require_pkce` `true`/`false`, an empty cell for an absent field.
 * A row that cannot be read is returned with its error, so that the report can name every bad row.
 * @throws ImportFileError when the file as a whole cannot be read (CSV quoting, unknown or repeated column).
 * @see RFC 4180 (CSV), JSON Lines (jsonlines.org).
 */
export function parseImportFile(text: string, format: ImportFormat): ImportRecord[] {
  return format === 'csv' ? parseCsv(text) : parseJsonLines(text);
}
