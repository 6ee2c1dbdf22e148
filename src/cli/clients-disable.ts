// `oauth-admin clients disable`: stops an integration and revokes every token it holds.
import type { Command } from 'commander';
import { disableClient } from '../clients/register-client.js';
import { CliError, EXIT_FAILURE } from './cli-error.js';
import { withStore } from './with-store.js';

/**
 * Adds `disable CLIENT_ID` to the `clients` command. A disabled integration authenticates nowhere and its
 * access and refresh tokens are revoked, so nothing it was given outlives it.
 * @see RFC 7009 §2.1, RFC 6749 §10.4.
 */
export function addClientsDisableCommand(clients: Command): void {
  clients
    .command('disable')
    .description('disable an integration and revoke all its tokens')
    .argument('<client_id>', 'the integration')
    .action(async (clientId: string) => {
      const found = await withStore((store) => disableClient(store, clientId));
      if (!found) throw new CliError(`unknown client_id ${JSON.stringify(clientId)}`, EXIT_FAILURE);
      process.stdout.write(`Disabled ${clientId}; its tokens are revoked.\n`);
    });
}
