// OAUTH_SCOPES: the router's scope vocabulary, which the CLI (another process) cannot read from the app's options.
import { checkScopeTokens } from '../checks/scope.js';

/**
 * The scopes the server knows, from OAUTH_SCOPES (space-separated, as a `scope` parameter: the keys of the app's
 * `scopes` option), or `undefined` when it is unset or blank: then registrations are not checked against a vocabulary,
 * as before it existed. Given, `create`, `update` and `import` refuse a scope outside it (`UnknownScopeError`), which
 * the router would never grant.
 * @throws TypeError (a usage error) naming OAUTH_SCOPES for an entry that is not a scope-token.
 * @see RFC 6749 §3.3 (scope-token), RFC 7591 §3.2.2 (`invalid_client_metadata`).
 */
export function scopeVocabulary(env: NodeJS.ProcessEnv = process.env): readonly string[] | undefined {
  const value = env['OAUTH_SCOPES']?.trim();
  if (!value) return undefined;
  const scopes = [...new Set(value.split(/\s+/))];
  try {
    checkScopeTokens(scopes);
  } catch (error) {
    throw new TypeError(`OAUTH_SCOPES: ${(error as Error).message}; give the scopes the app's scopes option names, separated by spaces`);
  }
  return scopes;
}

/** The admin API's option for the vocabulary of OAUTH_SCOPES: none when it is not set. */
export function vocabularyOption(env: NodeJS.ProcessEnv = process.env): { readonly scopes?: readonly string[] } {
  const scopes = scopeVocabulary(env);
  return scopes ? { scopes } : {};
}
