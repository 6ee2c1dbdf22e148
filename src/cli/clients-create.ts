// `oauth-admin clients create`: registers an integration and shows its secret, once.
import { Option, type Command } from 'commander';
import type { ClientFlow, TokenEndpointAuthMethod } from '../stores/contract.js';
import { CLIENT_AUTH_METHODS } from '../checks/client-auth-methods.js';
import { buildClientRecord, type RegisterClientInput } from '../clients/register-client.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { printJson, toClientJson } from './client-json.js';
import { parseIssuedAt } from './parse-issued-at.js';
import { withAdmin } from './with-admin.js';
import { vocabularyOption } from './scope-vocabulary.js';
import { collect } from './repeated-options.js';

interface CreateOptions {
  readonly name: string;
  readonly flow: ClientFlow;
  readonly redirectUri: string[];
  readonly scope: string[];
  readonly requirePkce?: boolean;
  readonly issuedAt?: string;
  readonly authMethod?: TokenEndpointAuthMethod;
  readonly json?: boolean;
}


/**
 * Adds `create` to the `clients` command. The secret exists only in this process's output: the store keeps
 * its SHA-256, so it cannot be shown again (rotate it to get a new one).
 * @see RFC 6749 §2 (client registration), SPEC §5.5 (one flow per integration), SPEC §9 (issue date).
 */
export function addClientsCreateCommand(clients: Command): void {
  clients
    .command('create')
    .description('register an integration; prints its client_id and, once only, its client_secret')
    .requiredOption('--name <name>', 'name shown to users on the consent page')
    .addOption(
      new Option('--flow <flow>', 'the one flow the integration may use')
        .choices(['authorization_code', 'client_credentials'])
        .makeOptionMandatory(),
    )
    .option('--redirect-uri <url>', 'exact redirect URI (repeatable; authorization_code only)', collect, [])
    .option('--scope <scope>', 'a scope the integration may be granted (repeatable; with OAUTH_SCOPES set, one of those); without --scope, as SPEC integrations are registered, its tokens carry no scope and are all-access (unless the server sets allAccessWithoutScopes: false)', collect, [])
    .option('--require-pkce', 'require an S256 code_challenge in authorization requests')
    .option('--issued-at <YYYY-MM-DD>', 'when the credentials count as issued (UTC); before 2021-01-15 means legacy address')
    .addOption(
      new Option('--auth-method <method>', 'the one way it may authenticate (RFC 7591 token_endpoint_auth_method); default: any the server allows')
        .choices(CLIENT_AUTH_METHODS),
    )
    .option('--json', 'print one JSON object instead of text')
    .action(async (options: CreateOptions) => {
      const issuedAt = options.issuedAt === undefined ? undefined : parseIssuedAt(options.issuedAt);
      const input: RegisterClientInput = {
        name: options.name,
        flow: options.flow,
        redirectUris: options.redirectUri,
        allowedScopes: options.scope,
        requirePkce: options.requirePkce === true,
        ...(issuedAt ? { credentialsIssuedAt: issuedAt } : {}),
        ...(options.authMethod ? { tokenEndpointAuthMethod: options.authMethod } : {}),
      };
      // Checked before the store is opened: a refused registration creates no store file (nothing done, exit 2).
      // registerClient throws TypeError for input that fails validation: that is a usage error.
      const usage = (error: unknown): never => {
        throw error instanceof TypeError ? new CliError(error.message, EXIT_USAGE) : error;
      };
      try {
        buildClientRecord(input, '', vocabularyOption());
      } catch (error) {
        usage(error);
      }
      // Through the admin API, so the registration is a `client.created` event (OAUTH_AUDIT_LOG); creates the store.
      const { client, clientSecret } = await withAdmin((admin) => admin.createClient(input).catch(usage), { mustExist: false, scopes: true });
      if (options.json) {
        printJson({ ...toClientJson(client), client_secret: clientSecret });
        return;
      }
      const lines = [
        `Registered integration "${client.name}" (${client.flow}).`,
        `  client_id:     ${client.clientId}`,
        `  client_secret: ${clientSecret}`,
        `  issued at:     ${client.credentialsIssuedAt.toISOString()}`,
      ];
      if (client.redirectUris.length > 0) lines.push(`  redirect URIs: ${client.redirectUris.join(' ')}`);
      if (client.allowedScopes.length > 0) lines.push(`  scopes:        ${client.allowedScopes.join(' ')}`);
      if (client.tokenEndpointAuthMethod) lines.push(`  auth method:   ${client.tokenEndpointAuthMethod}`);
      lines.push('', 'The client_secret is shown only this once: only its hash is stored. Copy it now.');
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
