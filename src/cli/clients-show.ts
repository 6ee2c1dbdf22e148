// `oauth-admin clients show`: one integration, without its secret.
import type { Command } from 'commander';
import { unknownClientError } from './cli-error.js';
import { printJson, toClientJson } from './client-json.js';
import { formatTable } from './format-table.js';
import { withReadingAdmin } from './with-admin.js';

/**
 * Adds `show CLIENT_ID` to the `clients` command: a read through `OAuthAdmin.getClient`. Read-only, so it
 * never creates a store; the secret's hash is left out like in `list`.
 * @see RFC 6749 §2 (client registration).
 */
export function addClientsShowCommand(clients: Command): void {
  clients
    .command('show')
    .description('show one integration (never its secret); creates no store')
    .argument('<client_id>', 'the integration')
    .option('--json', 'print one JSON object instead of text')
    .action(async (clientId: string, options: { readonly json?: boolean }) => {
      const client = await withReadingAdmin((admin) => admin.getClient(clientId));
      if (client === null) throw unknownClientError(clientId);
      const shown = toClientJson(client);
      if (options.json) {
        printJson(shown);
        return;
      }
      const rows = Object.entries(shown).map(([field, value]) => [
        field,
        Array.isArray(value) ? value.join(' ') : String(value),
      ]);
      process.stdout.write(`${formatTable(['FIELD', 'VALUE'], rows)}\n`);
    });
}
