// `oauth-admin clients update`: changes an integration's name, redirect URIs, scopes, PKCE or auth method.
import { Option, type Command } from 'commander';
import type { TokenEndpointAuthMethod } from '../stores/contract.js';
import type { ClientUpdate } from '../clients/update-client.js';
import { CLIENT_AUTH_METHODS } from '../checks/client-auth-methods.js';
import { printJson, toClientJson } from './client-json.js';
import { withAdmin } from './with-admin.js';
import { collect } from './repeated-options.js';

interface UpdateOptions {
  readonly name?: string;
  readonly redirectUri?: string[];
  readonly addRedirectUri?: string[];
  readonly removeRedirectUri?: string[];
  readonly scope?: string[];
  readonly requirePkce?: boolean;
  readonly authMethod?: TokenEndpointAuthMethod | 'any';
  readonly json?: boolean;
}


/** The options given, as the admin API's update (absent options are absent fields). */
function toUpdate(o: UpdateOptions): ClientUpdate {
  return {
    ...(o.name === undefined ? {} : { name: o.name }),
    ...(o.redirectUri === undefined ? {} : { redirectUris: o.redirectUri }),
    ...(o.addRedirectUri === undefined ? {} : { addRedirectUris: o.addRedirectUri }),
    ...(o.removeRedirectUri === undefined ? {} : { removeRedirectUris: o.removeRedirectUri }),
    ...(o.scope === undefined ? {} : { allowedScopes: o.scope }),
    ...(o.requirePkce === undefined ? {} : { requirePkce: o.requirePkce }),
    ...(o.authMethod === undefined ? {} : { tokenEndpointAuthMethod: o.authMethod === 'any' ? null : o.authMethod }),
  };
}

/** The `--json` key of a changed field (`ClientJson`'s names), so that `updated_fields` names keys of the same object. */
const WIRE_NAMES: Readonly<Record<string, string>> = {
  redirectUris: 'redirect_uris', allowedScopes: 'scopes', requirePkce: 'require_pkce', tokenEndpointAuthMethod: 'token_endpoint_auth_method',
};
const wireName = (field: string): string => WIRE_NAMES[field] ?? field;

/**
 * Adds `update CLIENT_ID [options]` to the `clients` command, a thin layer over `OAuthAdmin.updateClient`:
 * the values are checked as `create` checks them. Taking scopes away, or giving some to an integration that had
 * none (all-access), revokes every token of the integration; removing a redirect URI or requiring PKCE refuses
 * codes issued under the old setting, tokens stay.
 * @see RFC 6749 §2, §3.1.2.2, §3.3; RFC 7636; RFC 7591 §2.
 */
export function addClientsUpdateCommand(clients: Command): void {
  clients
    .command('update')
    .description('change an integration: name, redirect URIs, scopes, PKCE, auth method (taking scopes away, or scoping an all-access one, revokes its tokens)')
    .argument('<client_id>', 'the integration')
    .option('--name <name>', 'new name shown on the consent page')
    .option('--redirect-uri <url>', 'replace the redirect URIs with these (repeatable)', collect)
    .option('--add-redirect-uri <url>', 'add a redirect URI (repeatable)', collect)
    .option('--remove-redirect-uri <url>', 'remove a redirect URI (repeatable); codes issued for it are refused', collect)
    .option('--scope <scope>', 'replace the allowed scopes with these (repeatable; with OAUTH_SCOPES set, each one of those); removing one, or scoping an all-access integration, revokes every token', collect)
    .option('--require-pkce', 'require an S256 code_challenge (codes issued without one are refused)')
    .option('--no-require-pkce', 'stop requiring PKCE')
    .addOption(
      new Option('--auth-method <method>', 'restrict it to one client authentication method; "any" lifts the restriction')
        .choices([...CLIENT_AUTH_METHODS, 'any']),
    )
    .option('--json', 'print one JSON object instead of text')
    .action(async (clientId: string, options: UpdateOptions) => {
      const updated = await withAdmin((admin) => admin.updateClient(clientId, toUpdate(options)),
        { mustExist: true, scopes: options.scope !== undefined });
      if (options.json) {
        printJson({ ...toClientJson(updated.client), updated_fields: updated.fields.map(wireName), tokens_revoked: updated.tokensRevoked });
        return;
      }
      if (updated.fields.length === 0) {
        process.stdout.write(`Nothing changed for ${clientId}: it already has these settings.\n`);
        return;
      }
      const revoked = updated.tokensRevoked ? '; the integration lost a scope (or all-access), so its tokens are revoked' : '';
      process.stdout.write(`Updated ${clientId}: ${updated.fields.join(', ')}${revoked}.\n`);
    });
}
