// Refuses an option given twice with two meanings (`--name a --name b`, `--require-pkce --no-require-pkce`).
import type { Command, Option } from 'commander';
import { CliError, EXIT_USAGE } from './cli-error.js';

/**
 * The parser of a repeatable option (`--scope a --scope b`): each value is added to the list. Options parsed with
 * anything else hold one value, and `refuseRepeatedOptions` refuses a second.
 */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function takesValue(option: Option): boolean {
  return option.required || option.optional;
}

/**
 * Makes `command` refuse, as a usage error (exit 2, nothing done), a single-valued option given twice and a flag
 * given together with its negation. Commander keeps the last of them silently, so `update ID --name "Acme Ltd"
 * --name Acme` renamed to the second and `--require-pkce --no-require-pkce` turned PKCE off: an operator's
 * pasted-together command line would do half of what it reads as doing. A repeatable option (parsed by `collect`)
 * and a flag given twice (`--json --json`) mean nothing contradictory and are accepted.
 */
export function refuseRepeatedOptions(command: Command): void {
  // One program per run (runCli), so what was seen belongs to one command line.
  const seen = new Map<string, string>();
  for (const option of command.options) {
    if (option.parseArg === collect) continue;
    const flag = option.long ?? option.short ?? option.name();
    command.on(`option:${option.name()}`, () => {
      const key = option.attributeName();
      const before = seen.get(key);
      seen.set(key, flag);
      if (before === undefined || (before === flag && !takesValue(option))) return;
      const problem = before === flag ? `${flag} was given twice: give it once` : `${before} and ${flag} contradict each other: give one`;
      throw new CliError(problem, EXIT_USAGE);
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub);
}
