// `oauth-admin clients rotate-secret`: replaces an integration's secret and shows the new one, once.
import type { Command } from 'commander';
import { rotateClientSecret } from '../clients/rotate-client-secret.js';
import { unknownClientError } from './cli-error.js';
import { printJson } from './client-json.js';
import { withStore } from './with-store.js';

/**
 * Adds `rotate-secret CLIENT_ID` to the `clients` command, a thin layer over `rotateClientSecret`. The old secret stops working at once, and every
 * token and code obtained before the rotation is revoked: a secret is rotated because it may have leaked.
 * @see RFC 6749 §2.3.1 (client password), §10.1.
 */
export function addClientsRotateSecretCommand(clients: Command): void {
  clients
    .command('rotate-secret')
    .description('issue a new client_secret; the old one and every token obtained before stop working at once')
    .argument('<client_id>', 'the integration')
    .option('--json', 'print one JSON object instead of text')
    .action(async (clientId: string, options: { readonly json?: boolean }) => {
      const clientSecret = await withStore((store) => rotateClientSecret(store, clientId), { mustExist: true });
      if (clientSecret === null) throw unknownClientError(clientId);
      if (options.json) {
        printJson({ client_id: clientId, client_secret: clientSecret });
        return;
      }
      process.stdout.write(
        [
          `New secret for ${clientId}; the old one, and every token issued before, no longer work.`,
          `  client_secret: ${clientSecret}`,
          '',
          'The client_secret is shown only this once: only its hash is stored. Copy it now.',
        ].join('\n') + '\n',
      );
    });
}
