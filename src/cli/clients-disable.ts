// `oauth-admin clients disable`: stops an integration and revokes every token it holds.
import type { Command } from 'commander';
import { printJson } from './client-json.js';
import { withAdmin } from './with-admin.js';

/**
 * Adds `disable CLIENT_ID` to the `clients` command, a thin layer over `OAuthAdmin.disableClient`. A disabled
 * integration authenticates nowhere and its access and refresh tokens are revoked, so nothing it was given
 * outlives it; `enable` lets it in again without bringing any of them back.
 * @see RFC 7009 §2.1, RFC 6749 §10.4.
 */
export function addClientsDisableCommand(clients: Command): void {
  clients
    .command('disable')
    .description('disable an integration: it authenticates nowhere, and every token and code it holds is revoked')
    .argument('<client_id>', 'the integration')
    .option('--json', 'print one JSON object instead of text')
    .action(async (clientId: string, options: { readonly json?: boolean }) => {
      // Rejects with UnknownClientError (exit 1, unknown_client) for an id no integration has.
      const { alreadyDisabled } = await withAdmin((admin) => admin.disableClient(clientId));
      if (options.json) {
        printJson({ client_id: clientId, disabled: true, already_disabled: alreadyDisabled });
        return;
      }
      // A retry says so: the audit log has no second client.disabled for it.
      process.stdout.write(alreadyDisabled
        ? `${clientId} was disabled already; its tokens are revoked again.\n`
        : `Disabled ${clientId}; its tokens are revoked.\n`);
    });
}
