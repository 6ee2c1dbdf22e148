// `oauth-admin clients delete`: removes an integration for good, after revoking its tokens.
import type { Command } from 'commander';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { printJson } from './client-json.js';
import { withAdmin } from './with-admin.js';

/**
 * Adds `delete CLIENT_ID --yes` to the `clients` command, a thin layer over `OAuthAdmin.deleteClient`.
 * Without `--yes` it is a usage error (exit 2) and nothing changes: deleting cannot be undone, unlike
 * `disable`. A store without `deleteClient` answers `unsupported` (exit 1), also changing nothing.
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §2.
 */
export function addClientsDeleteCommand(clients: Command): void {
  clients
    .command('delete')
    .description('delete an integration for good: revokes every token, removes its codes and consents (needs --yes)')
    .argument('<client_id>', 'the integration')
    .option('--yes', 'confirm: this cannot be undone (to stop it reversibly, use disable)')
    .option('--json', 'print one JSON object instead of text')
    .action(async (clientId: string, options: { readonly yes?: boolean; readonly json?: boolean }) => {
      if (options.yes !== true) {
        throw new CliError(`deleting cannot be undone: repeat with --yes to delete ${clientId} (or use "clients disable")`, EXIT_USAGE);
      }
      await withAdmin((admin) => admin.deleteClient(clientId));
      if (options.json) {
        printJson({ client_id: clientId, deleted: true });
        return;
      }
      process.stdout.write(`Deleted ${clientId}; its tokens are revoked, its codes and consents removed.\n`);
    });
}
