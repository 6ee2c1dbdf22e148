// `oauth-admin clients rotate-secret`: replaces an integration's secret and shows the new one, once.
import type { Command } from 'commander';
import { printJson } from './client-json.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { parseDuration } from './parse-duration.js';
import { withAdmin } from './with-admin.js';
import { RevocationIncompleteError } from '../clients/client-errors.js';
import { MAX_SECRET_GRACE_SECONDS, type RotatedSecret } from '../clients/rotate-client-secret.js';

/**
 * Adds `rotate-secret CLIENT_ID [--grace DURATION]` to the `clients` command, a thin layer over
 * `OAuthAdmin.rotateSecret`. Without `--grace` the old secret stops working at once and every token and
 * code obtained before is revoked (a secret is rotated at once because it may have leaked). With it, the
 * old secret keeps working until the grace period ends and no token is revoked (a planned rotation).
 * @see RFC 6749 §2.3.1 (client password), §10.1; RFC 6819 §5.2.3.7.
 */
export function addClientsRotateSecretCommand(clients: Command): void {
  clients
    .command('rotate-secret')
    .description('issue a new client_secret; without --grace the old one and every token obtained before stop working at once')
    .argument('<client_id>', 'the integration')
    .option('--grace <duration>', 'keep the old secret working this long (seconds, or 90s, 30m, 12h, 7d; at most 30d) and revoke no token')
    .option('--json', 'print one JSON object instead of text')
    .action(async (clientId: string, options: { readonly grace?: string; readonly json?: boolean }) => {
      const grace = options.grace === undefined ? undefined : parseDuration(options.grace, '--grace');
      // A grace of nothing would be the leak rotation (every token revoked) under the name of a planned one.
      if (grace === 0) {
        throw new CliError('--grace must be more than 0; for a rotation that stops the old secret at once, leave --grace out', EXIT_USAGE);
      }
      // Said in the option's own terms, not the admin API's (gracePeriodSeconds, whose range starts at 0).
      if (grace !== undefined && grace > MAX_SECRET_GRACE_SECONDS) {
        throw new CliError(`--grace is at most 30 days (30d, ${MAX_SECRET_GRACE_SECONDS} seconds)`, EXIT_USAGE);
      }
      let rotated: RotatedSecret;
      try {
        rotated = await withAdmin((admin) => admin.rotateSecret(clientId, grace === undefined ? {} : { gracePeriodSeconds: grace }));
      } catch (error) {
        // The new secret is printed all the same (it exists nowhere else), then the error: exit 1.
        if (!(error instanceof RevocationIncompleteError) || error.clientSecret === null) throw error;
        if (options.json) printJson({ client_id: clientId, client_secret: error.clientSecret, previous_secret_valid_until: null, tokens_revoked: false });
        else process.stdout.write(`New secret for ${clientId} (the old one no longer works):\n  client_secret: ${error.clientSecret}\n`);
        throw error;
      }
      const until = rotated.previousSecretValidUntil;
      if (options.json) {
        printJson({
          client_id: clientId,
          client_secret: rotated.clientSecret,
          previous_secret_valid_until: until ? until.toISOString() : null,
          tokens_revoked: rotated.tokensRevoked,
        });
        return;
      }
      const first = until
        ? `New secret for ${clientId}; the old one keeps working until ${until.toISOString()}, and tokens stay valid.`
        : `New secret for ${clientId}; the old one, and every token issued before, no longer work.`;
      process.stdout.write(
        [first, `  client_secret: ${rotated.clientSecret}`, '', 'The client_secret is shown only this once: only its hash is stored. Copy it now.'].join('\n') + '\n',
      );
    });
}
