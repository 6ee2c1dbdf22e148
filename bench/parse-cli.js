// The bench scripts' command line: node:util's parseArgs, with --help, and a one-line error instead of a stack trace.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/**
 * Parses argv against `options` (parseArgs' shape). `--help` prints the script's opening comment and each option
 * with its default, then exits 0; an unknown option or a missing value prints the reason and exits 2. With
 * `deferHelp`, `--help` is returned as `help: true` instead, for a script whose help needs what it defines later
 * (`printHelp`).
 * @param {string} scriptUrl the script's import.meta.url, whose leading `//` lines are its usage
 * @param {Record<string, { type: 'string' | 'boolean', default?: string | boolean }>} options
 * @param {{ deferHelp?: boolean }} [settings]
 * @returns {Record<string, string | boolean | undefined>}
 */
export function parseCli(scriptUrl, options, { deferHelp = false } = {}) {
  let parsed;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h', default: false } } });
  } catch (error) {
    failCli(error.message);
  }
  const { help, ...values } = parsed.values;
  if (deferHelp) return { ...values, help };
  if (help) printHelp(scriptUrl, options);
  return values;
}

/** Prints the usage `parseCli` prints for `--help`, then `more` (e.g. the scenario ids), and exits 0. */
export function printHelp(scriptUrl, options, more) {
  process.stdout.write(usage(scriptUrl, options, more));
  process.exit(0);
}

function usage(scriptUrl, options, more) {
  const intro = [];
  for (const line of readFileSync(fileURLToPath(scriptUrl), 'utf8').split('\n')) {
    if (!line.startsWith('//')) break;
    intro.push(line.replace(/^\/\/ ?/, ''));
  }
  const rows = Object.entries(options).map(([name, option]) => {
    const value = option.type === 'string' ? ' VALUE' : '';
    const fallback = option.type === 'string' && option.default !== undefined && option.default !== '' ? ` (default ${option.default})` : '';
    return `  --${name}${value}${fallback}`;
  });
  return `${intro.join('\n')}\n\nOptions:\n${rows.join('\n')}\n  --help, -h\n${more ? `\n${more}\n` : ''}`;
}

/** Prints a command-line mistake (an option's value out of range, an unknown scenario) and exits 2. */
export function failCli(message) {
  process.stderr.write(`${message}\nRun with --help for the options.\n`);
  process.exit(2);
}
