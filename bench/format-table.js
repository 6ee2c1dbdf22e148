// Formats rows as a Markdown table with padded columns, readable both in a terminal and in BENCHMARKS.md.

/**
 * @param {string[]} headers
 * @param {string[][]} rows
 * @param {Array<'l' | 'r'>} [align] per column; default left
 */
export function markdownTable(headers, rows, align = []) {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => row[i].length), 3));
  const cell = (text, i) => (align[i] === 'r' ? text.padStart(widths[i]) : text.padEnd(widths[i]));
  const line = (cells) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((width, i) => (align[i] === 'r' ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
