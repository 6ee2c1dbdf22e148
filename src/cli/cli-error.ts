// An error the admin command reports as one line on stderr, with a chosen exit code.

/** Exit code for bad input: an unknown option, a malformed value, a client that fails validation. */
export const EXIT_USAGE = 2;
/** Exit code for a well-formed request that could not be carried out (e.g. unknown client_id). */
export const EXIT_FAILURE = 1;

/**
 * A failure with a message meant for the operator (no stack trace) and the process exit code.
 * Commands throw it; `main` prints it and exits, so commands never call `process.exit` themselves and the
 * store is always closed first.
 */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
