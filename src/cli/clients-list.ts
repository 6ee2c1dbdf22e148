// `oauth-admin clients list`: every integration, without secrets.
import type { Command } from 'commander';
import { previousSecretValidUntil, printJson, toClientJson } from './client-json.js';
import { formatTable } from './format-table.js';
import { withReadingAdmin } from './with-admin.js';

/**
 * Adds `list` to the `clients` command. Prints ids, names, flows, issue dates, status and redirect URIs;
 * the store holds no secret to print, and the hash is deliberately left out too. Read-only: with no store
 * there it fails (`no_store`) rather than create an empty one.
 */
export function addClientsListCommand(clients: Command): void {
  clients
    .command('list')
    .description('list the registered integrations (never their secrets); creates no store')
    .option('--json', 'print a JSON array instead of a table')
    .action(async (options: { readonly json?: boolean }) => {
      const list = await withReadingAdmin((admin) => admin.listClients());
      if (options.json) {
        printJson(list.map(toClientJson));
        return;
      }
      if (list.length === 0) {
        process.stdout.write('No integrations registered. Create one with: oauth-admin clients create --help\n');
        return;
      }
      const rows = list.map((client) => [
        client.clientId,
        client.name,
        client.flow,
        client.credentialsIssuedAt.toISOString().slice(0, 10),
        client.disabled ? 'yes' : 'no',
        previousSecretValidUntil(client)?.toISOString() ?? '-',
        client.redirectUris.join(' '),
      ]);
      // OLD_SECRET_UNTIL: while a rotation's grace period runs, the previous secret works until then.
      const headers = ['CLIENT_ID', 'NAME', 'FLOW', 'ISSUED_AT', 'DISABLED', 'OLD_SECRET_UNTIL', 'REDIRECT_URIS'];
      process.stdout.write(`${formatTable(headers, rows)}\n`);
    });
}
