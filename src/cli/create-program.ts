// The oauth-admin command tree.
import { Command } from 'commander';
import { addClientsCreateCommand } from './clients-create.js';
import { addClientsDisableCommand } from './clients-disable.js';
import { addClientsListCommand } from './clients-list.js';
import { addClientsRotateSecretCommand } from './clients-rotate-secret.js';
import { explainDashClientIds } from './client-id-hint.js';

/**
 * Builds the command tree. `exitOverride` is set before the subcommands are added so they inherit it:
 * commander then throws instead of exiting, and `runCli` decides the exit code in one place. Every command
 * taking a `<client_id>` explains `--` when an id starting with `-` is read as an option (RFC 6749 §2.2).
 */
export function createProgram(): Command {
  const program = new Command('oauth-admin')
    .description('Administer the integrations of express-oauth-router. Store: $OAUTH_STORE (default sqlite:./data/oauth.sqlite).')
    .exitOverride();
  const clients = program.command('clients').description('manage integrations (OAuth clients)');
  addClientsCreateCommand(clients);
  addClientsListCommand(clients);
  addClientsRotateSecretCommand(clients);
  addClientsDisableCommand(clients);
  // Found by argument name, so a command added later gets the hint without anyone remembering to ask.
  for (const command of clients.commands) {
    if (command.registeredArguments.some((argument) => argument.name() === 'client_id')) explainDashClientIds(command);
  }
  return program;
}
