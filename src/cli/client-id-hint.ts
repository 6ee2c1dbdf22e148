// Tells the operator to write `--` when a client_id that starts with "-" was read as an unknown option.
import type { Command } from 'commander';

/**
 * What an id looks like when commander takes it for an option: one dash and two or more characters (no option of
 * this CLI is written so: its options are long, and `-h`/`-V` one letter), or a dash and 20+ base64url characters.
 */
const DASH_CLIENT_ID = /^error: unknown option '(-[^-'\s][^'\s]+|-[A-Za-z0-9_-]{20,})'/;

/** Quotes a word for a POSIX shell unless it is plainly safe to paste as is. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The options the operator gave this command, written back as flags, so the suggested line keeps them. */
function givenOptions(command: Command): string[] {
  const values = command.opts<Record<string, unknown>>();
  return command.options.flatMap((option) => {
    const value = values[option.attributeName()];
    const flag = option.long ?? option.short ?? option.flags;
    if (value === true) return [flag];
    if (typeof value === 'string') return [flag, shellWord(value)];
    if (Array.isArray(value)) return value.flatMap((item) => [flag, shellWord(String(item))]);
    return [];
  });
}

/**
 * Makes `command` (one that takes a client_id) explain, when commander rejects an unknown option that looks
 * like a client_id, the line to type instead: ids made before ids were kept from starting with `-` (about
 * one in 64) are still valid (RFC 6749 §2.2 leaves their form to the server) and are taken after `--`.
 * The exit code is unchanged (a usage error); other errors pass through untouched.
 * @see RFC 6749 §2.2 (client identifier).
 */
export function explainDashClientIds(command: Command): void {
  command.configureOutput({
    outputError: (message, write) => {
      const id = DASH_CLIENT_ID.exec(message)?.[1];
      if (id === undefined) {
        write(message);
        return;
      }
      const path: string[] = [];
      for (let at: Command | null = command; at; at = at.parent) path.unshift(at.name());
      const line = [...path, ...givenOptions(command), '--', id].join(' ');
      write(`${message.trimEnd()}. If this is a client_id, put -- before it: ${line}\n`);
    },
  });
}
