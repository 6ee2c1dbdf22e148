// An error the admin command reports as one line on stderr (or one JSON object with --json), with a chosen exit code.

/** Exit code for bad input: an unknown option, a malformed value, a client that fails validation. */
export const EXIT_USAGE = 2;
/** Exit code for a well-formed request that could not be carried out (e.g. unknown client_id). */
export const EXIT_FAILURE = 1;

/**
 * The stable `error` field of the JSON error that `--json` writes on stderr, for scripts to branch on:
 * - `usage_error` (exit 2): an unknown command or option, a missing or malformed value;
 * - `unknown_client` (exit 1): no integration has that client_id;
 * - `no_store` (exit 1): a command that needs an existing store found none, or a SQLite file holding none
 *   (nothing is created or changed);
 * - `store_unavailable` (exit 1): the store's database or cache could not be reached;
 * - `unsupported` (exit 1): the store cannot do it (no `deleteClient`; no previous secret for a grace
 *   period), and nothing was changed;
 * - `grace_period_running` (exit 1): `rotate-secret --grace` while an earlier rotation's grace period runs;
 *   nothing was changed;
 * - `revocation_incomplete` (exit 1): the change was written but revoking what came before it failed;
 * - `replacement_incomplete` (exit 1): `keys replace-leaked` saved its new key, then failed to delete every old one;
 * - `clock_skew` (exit 1): a command that changes something, on a machine whose clock is more than a second
 *   off the store server's (`checkClock`); nothing was changed;
 * - `failure` (exit 1): anything else.
 */
export type CliErrorCode = 'usage_error' | 'unknown_client' | 'no_store' | 'store_unavailable' | 'unsupported' | 'grace_period_running' | 'revocation_incomplete' | 'replacement_incomplete' | 'clock_skew' | 'failure';

/**
 * A failure with a message meant for the operator (no stack trace), the process exit code and, for
 * `--json`, a stable code. Commands throw it; `runCli` prints it and returns the exit code, so commands
 * never call `process.exit` themselves and the store is always closed first.
 */
export class CliError extends Error {
  readonly exitCode: number;
  readonly code: CliErrorCode;

  constructor(message: string, exitCode: number, code?: CliErrorCode) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = code ?? (exitCode === EXIT_USAGE ? 'usage_error' : 'failure');
  }
}

/** The error of a command given a client_id that no integration has (exit 1, `unknown_client`). */
export function unknownClientError(clientId: string): CliError {
  return new CliError(`unknown client_id ${JSON.stringify(clientId)}`, EXIT_FAILURE, 'unknown_client');
}
