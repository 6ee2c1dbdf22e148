// `oauth-admin tokens revoke`: revokes every token of an integration, of a user at one, or of a user everywhere.
import type { Command } from 'commander';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { printJson } from './client-json.js';
import { withAdmin } from './with-admin.js';

/**
 * Adds `revoke --client ID [--user ID]` / `revoke --user ID` to the `tokens` command, a thin layer over
 * `OAuthAdmin.revokeTokens`. The integration stays enabled; what was revoked is gone for good.
 * `--user` alone visits every integration (one store revocation each).
 * @see RFC 7009 §2.1 (revocation), RFC 6749 §10.4.
 */
export function addTokensRevokeCommand(tokens: Command): void {
  tokens
    .command('revoke')
    .description('revoke access and refresh tokens: of an integration (--client), of a user at it (--client --user), or of a user everywhere (--user)')
    .option('--client <client_id>', 'the integration')
    .option('--user <user_id>', 'the user (the id your app gives the router)')
    .option('--json', 'print one JSON object instead of text')
    .action(async (options: { readonly client?: string; readonly user?: string; readonly json?: boolean }) => {
      if (options.client === undefined && options.user === undefined) {
        throw new CliError('give --client, --user, or both', EXIT_USAGE);
      }
      const target = {
        ...(options.client === undefined ? {} : { clientId: options.client }),
        ...(options.user === undefined ? {} : { userId: options.user }),
      };
      const result = await withAdmin((admin) => admin.revokeTokens(target));
      if (options.json) {
        printJson({ extent: result.extent, user_id: result.userId, client_ids: result.clientIds });
        return;
      }
      const whose = result.userId === null ? 'every token' : `the tokens of user ${result.userId}`;
      const where = options.client !== undefined ? `at ${options.client}` : `at ${result.clientIds.length} integration(s)`;
      process.stdout.write(`Revoked ${whose} ${where}.\n`);
    });
}
