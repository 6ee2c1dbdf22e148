// `oauth-admin clients enable`: lets a disabled integration authenticate again.
import type { Command } from 'commander';
import { printJson } from './client-json.js';
import { withAdmin } from './with-admin.js';

/**
 * Adds `enable CLIENT_ID` to the `clients` command, a thin layer over `OAuthAdmin.enableClient`: the reverse of
 * `disable`. The integration authenticates again with its current secret and obtains new tokens; the
 * tokens revoked by `disable` stay revoked.
 * @see RFC 7009 §2.1, RFC 6749 §2.3.
 */
export function addClientsEnableCommand(clients: Command): void {
  clients
    .command('enable')
    .description('enable a disabled integration again; tokens revoked when it was disabled stay revoked')
    .argument('<client_id>', 'the integration')
    .option('--json', 'print one JSON object instead of text')
    .action(async (clientId: string, options: { readonly json?: boolean }) => {
      // Rejects with UnknownClientError (exit 1, unknown_client) for an id no integration has.
      const { alreadyEnabled } = await withAdmin((admin) => admin.enableClient(clientId));
      if (options.json) {
        printJson({ client_id: clientId, disabled: false, already_enabled: alreadyEnabled });
        return;
      }
      // A retry says so: the audit log has no second client.enabled for it.
      process.stdout.write(alreadyEnabled
        ? `${clientId} was enabled already; nothing changed.\n`
        : `Enabled ${clientId}; tokens revoked while it was disabled stay revoked.\n`);
    });
}
