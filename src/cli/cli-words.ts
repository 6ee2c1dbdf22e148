// The admin API's field names in an error message, said as the oauth-admin options an operator typed.

/** API field (as the registration and update rules name it) → the option that sets it. */
const OPTIONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bredirectUris \(a replacement\) or addRedirectUris\/removeRedirectUris\b/g, '--redirect-uri (a replacement) or --add-redirect-uri/--remove-redirect-uri'],
  [/\brequirePkce\b/g, '--require-pkce'],
  [/\btokenEndpointAuthMethod\b/g, '--auth-method'],
  [/\bcredentialsIssuedAt\b/g, '--issued-at'],
  [/\bgracePeriodSeconds\b/g, '--grace'],
  [/\bgive a clientId, a userId, or both\b/g, 'give --client, --user, or both'],
  [/\bgive at least one field to change\b/g, 'give at least one option'],
];

/**
 * `message` with the admin API's field names replaced by the options of the command line (`requirePkce` →
 * `--require-pkce`): the rules are written once, for the API, and an operator should not have to translate them.
 */
export function inCliWords(message: string): string {
  return OPTIONS.reduce((text, [field, option]) => text.replace(field, option), message);
}
