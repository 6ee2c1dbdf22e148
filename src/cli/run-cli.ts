// Runs oauth-admin on an argument list and turns every outcome into an exit code.
import { CommanderError } from 'commander';
import { isStoreUnavailableError } from '../stores/store-unavailable-error.js';
import { SigningKeysReplacementIncompleteError } from '../jwt/replacement-incomplete-error.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, type CliErrorCode } from './cli-error.js';
import { createProgram } from './create-program.js';
import { inCliWords } from './cli-words.js';
import { GracePeriodRunningError, RevocationIncompleteError, StoreCapabilityError, UnknownClientError } from '../clients/client-errors.js';

/**
 * Whether `--json` was given as an option (before any `--`). Read from the raw arguments because it must
 * also shape the errors of a command line that commander could not parse.
 */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** The stable code and exit code of an error a command threw. */
function classify(error: unknown): { readonly code: CliErrorCode; readonly exitCode: number } {
  if (error instanceof CliError) return { code: error.code, exitCode: error.exitCode };
  if (error instanceof UnknownClientError) return { code: 'unknown_client', exitCode: EXIT_FAILURE };
  if (error instanceof StoreCapabilityError) return { code: 'unsupported', exitCode: EXIT_FAILURE };
  if (error instanceof GracePeriodRunningError) return { code: 'grace_period_running', exitCode: EXIT_FAILURE };
  if (error instanceof RevocationIncompleteError) return { code: 'revocation_incomplete', exitCode: EXIT_FAILURE };
  if (error instanceof SigningKeysReplacementIncompleteError) return { code: 'replacement_incomplete', exitCode: EXIT_FAILURE };
  if (isStoreUnavailableError(error)) return { code: 'store_unavailable', exitCode: EXIT_FAILURE };
  // Store URLs and other configuration are validated with TypeError: bad input, not a failure.
  if (error instanceof TypeError) return { code: 'usage_error', exitCode: EXIT_USAGE };
  return { code: 'failure', exitCode: EXIT_FAILURE };
}

/** What commander said, without its "error: " prefix; its help text, when it printed help instead, is no message. */
function commanderMessage(error: CommanderError, written: readonly string[]): string {
  if (error.code === 'commander.help') return 'a command is required; run with --help to list them';
  const text = written.join('').trim() || error.message;
  return text.replace(/^error: /, '');
}

function writeJsonError(code: CliErrorCode, message: string): void {
  process.stderr.write(`${JSON.stringify({ error: code, message })}\n`);
}

/**
 * Runs the command line (arguments after the program name) and returns the exit code: 0 success,
 * 1 failure (e.g. unknown client_id, no store), 2 bad input. Only the error message reaches stderr, never a
 * stack trace, which could carry store details; with `--json` it is one `{"error", "message"}` object.
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  const json = wantsJson(argv);
  const written: string[] = [];
  const program = createProgram(json ? { json, writeErr: (text) => written.push(text) } : {});
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help or --version (exit 0) is already printed; so is a usage error, unless --json held it back.
      if (error.exitCode === 0) return 0;
      if (json) writeJsonError('usage_error', commanderMessage(error, written));
      return EXIT_USAGE;
    }
    const { code, exitCode } = classify(error);
    const text = error instanceof Error ? error.message : String(error);
    // A usage error comes from the admin API's rules, which name its fields; the operator typed options.
    const message = code === 'usage_error' ? inCliWords(text) : text;
    if (json) writeJsonError(code, message);
    else process.stderr.write(`oauth-admin: ${message}\n`);
    return exitCode;
  }
}
