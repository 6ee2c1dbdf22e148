// Plain-text table for the human output of `clients list`.

/**
 * Lays out rows under a header, columns padded to their widest cell and separated by two spaces.
 * Control characters in cells are replaced, so a hostile integration name cannot forge lines or move the
 * terminal cursor.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (cell: string): string => cell.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  const all = [headers, ...rows].map((row) => row.map(clean));
  const widths = headers.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  return all
    .map((row) => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd())
    .join('\n');
}
