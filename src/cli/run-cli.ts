// Runs oauth-admin on an argument list and turns every outcome into an exit code.
import { CommanderError } from 'commander';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './cli-error.js';
import { createProgram } from './create-program.js';

/**
 * Runs the command line (arguments after the program name) and returns the exit code: 0 success,
 * 1 failure (e.g. unknown client_id), 2 bad input. Only the error message reaches stderr, never a stack
 * trace, which could carry store details.
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    await createProgram().parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    // commander has already printed its own message (or the help) for these.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`oauth-admin: ${message}\n`);
    if (error instanceof CliError) return error.exitCode;
    // Store URLs and other configuration are validated with TypeError: bad input, not a failure.
    return error instanceof TypeError ? EXIT_USAGE : EXIT_FAILURE;
  }
}
