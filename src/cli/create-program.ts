// The oauth-admin command tree.
import { Command, CommanderError } from 'commander';
import { addClientsCreateCommand } from './clients-create.js';
import { addClientsDeleteCommand } from './clients-delete.js';
import { addClientsUpdateCommand } from './clients-update.js';
import { addTokensRevokeCommand } from './tokens-revoke.js';
import { addClientsDisableCommand } from './clients-disable.js';
import { addClientsEnableCommand } from './clients-enable.js';
import { addClientsImportCommand } from './clients-import.js';
import { addClientsListCommand } from './clients-list.js';
import { addClientsRotateSecretCommand } from './clients-rotate-secret.js';
import { addClientsShowCommand } from './clients-show.js';
import { addKeysListCommand } from './keys-list.js';
import { addKeysReplaceLeakedCommand } from './keys-replace-leaked.js';
import { explainDashClientIds } from './client-id-hint.js';
import { printJson } from './client-json.js';
import { packageVersion } from './package-version.js';
import { refuseRepeatedOptions } from './repeated-options.js';

/** How `runCli` wants the program to write what commander writes itself. */
export interface ProgramSettings {
  /** `--json` was given somewhere: `--version` prints `{"version": …}`. */
  readonly json?: boolean;
  /** Receives commander's error messages instead of stderr (`runCli` reports them as JSON). */
  readonly writeErr?: (text: string) => void;
}

const HELP_AFTER = `
Store: OAUTH_STORE, default sqlite:./data/oauth.sqlite (also postgres://…, redis://…).
Only "clients create" and "clients import" create a store, and never in a SQLite database that holds other data;
every other command fails when there is none (also on a SQLite file that holds no store), changing nothing.

With --json every command prints one JSON document on stdout, and an error as one JSON object on stderr:
  {"error": CODE, "message": TEXT}
  CODE: usage_error, unknown_client, no_store, store_unavailable, unsupported, grace_period_running, revocation_incomplete, replacement_incomplete, clock_skew or failure.

Exit codes: 0 done; 1 failure (unknown client_id, no store, store unreachable, unsupported by the store); 2 usage error.
  1: unknown_client, no_store, store_unavailable, unsupported (the store cannot do it; nothing changed),
     grace_period_running (rotate-secret --grace while an earlier grace period runs; nothing changed),
     revocation_incomplete (a rotation, disable or narrowing was written, revoking what came before failed),
     replacement_incomplete (keys replace-leaked saved its new key, deleting every old one failed: run it again),
     clock_skew (a change from a machine whose clock is over 1 s off the PostgreSQL or Redis server's; nothing changed),
     failure.
  2: usage_error: an unknown command or option, a missing or malformed value, a value the registration
     rules refuse, "clients delete" or "keys replace-leaked" without --yes, an OAUTH_STORE "create" or "import" may not use; nothing changed. Scripts may rely on these codes.`;

/** A group of commands (`clients`, `tokens`, `keys`), taking `--json` as its commands do. */
function commandGroup(program: Command, name: string, description: string): Command {
  return program.command(name).description(description)
    .option('--json', 'machine-readable output and errors (also accepted after the command)');
}

/**
 * Builds the command tree. `exitOverride` is set before the subcommands are added so they inherit it:
 * commander then throws instead of exiting, and `runCli` decides the exit code in one place. Options are
 * positional, so `--json` before a command belongs to the program and after it to the command; either way
 * the command sees it. Every command taking a `<client_id>` explains `--` when an id starting with `-` is
 * read as an option (RFC 6749 §2.2).
 */
export function createProgram(settings: ProgramSettings = {}): Command {
  const program = new Command('oauth-admin')
    .description('Administer the integrations (OAuth clients) of express-oauth-router.')
    .exitOverride()
    .enablePositionalOptions();
  if (settings.writeErr) program.configureOutput({ writeErr: settings.writeErr });
  program
    .option('-V, --version', 'print the version of express-oauth-router and exit')
    .option('--json', 'machine-readable output and errors (also accepted after any command)')
    .addHelpText('after', HELP_AFTER);
  // Our own --version rather than commander's: it reads package.json only when asked, and speaks JSON.
  program.on('option:version', () => {
    const version = packageVersion();
    if (settings.json) printJson({ version });
    else process.stdout.write(`${version}\n`);
    throw new CommanderError(0, 'commander.version', version);
  });
  // A --json given before the command (to the program or to `clients`) reaches the command's own option.
  program.hook('preAction', (_program, action) => {
    for (let at = action.parent; at; at = at.parent) {
      if (at.opts()['json'] === true) action.setOptionValue('json', true);
    }
  });
  const clients = commandGroup(program, 'clients',
    'manage integrations (OAuth clients): create, list, show, update, rotate-secret, disable, enable, import, delete');
  addClientsCreateCommand(clients);
  addClientsListCommand(clients);
  addClientsShowCommand(clients);
  addClientsUpdateCommand(clients);
  addClientsRotateSecretCommand(clients);
  addClientsDisableCommand(clients);
  addClientsEnableCommand(clients);
  addClientsImportCommand(clients);
  addClientsDeleteCommand(clients);
  const tokens = commandGroup(program, 'tokens', 'revoke access and refresh tokens by integration or user');
  addTokensRevokeCommand(tokens);
  const keys = commandGroup(program, 'keys', 'the signing keys of JWT access tokens kept in the store: list, replace-leaked');
  addKeysListCommand(keys);
  addKeysReplaceLeakedCommand(keys);
  // Found by argument name, so a command added later gets the hint without anyone remembering to ask.
  for (const command of clients.commands) {
    if (command.registeredArguments.some((argument) => argument.name() === 'client_id')) explainDashClientIds(command);
  }
  refuseRepeatedOptions(program);
  return program;
}
