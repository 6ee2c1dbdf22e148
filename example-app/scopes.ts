// The app's scope vocabulary (the router's `scopes` option): its own, or OAUTH_SCOPES, the one oauth-admin reads, when set.

/** The scopes the API's routes require (envelopes.ts), with the words the consent page shows for each. */
export const APP_SCOPES: Readonly<Record<string, string>> = {
  'envelopes:read': 'See your envelopes and their status',
  'envelopes:write': 'Create envelopes and send them for signature',
};

// scope-token = 1*( %x21 / %x23-5B / %x5D-7E ) (RFC 6749 §3.3)
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * The `scopes` option from OAUTH_SCOPES (space-separated, as `oauth-admin` reads it), so the app and the CLI share one
 * vocabulary: the router grants no scope outside it, and the CLI refuses to register one. Unset or blank: the app's own
 * (`APP_SCOPES`). Set: exactly its scopes, each with the consent page's words of `APP_SCOPES` or, for a scope the app
 * does not describe, the scope itself. It must name every scope the API's routes require: without one, the router would
 * grant it to nobody and those routes would answer 403 to every scoped token.
 * @throws TypeError naming OAUTH_SCOPES for an entry that is not a scope-token, or for a route's scope left out.
 * @see RFC 6749 §3.3 (scope-token), RFC 8414 §2 (`scopes_supported`).
 */
export function scopesFromEnvironment(value: string | undefined): Readonly<Record<string, string>> {
  const given = value?.trim();
  if (!given) return APP_SCOPES;
  const names = [...new Set(given.split(/\s+/))];
  const malformed = names.find((name) => !SCOPE_TOKEN.test(name));
  if (malformed !== undefined) {
    throw new TypeError(`OAUTH_SCOPES: ${JSON.stringify(malformed)} is not a scope-token (RFC 6749 §3.3); give the scopes separated by spaces`);
  }
  const missing = Object.keys(APP_SCOPES).filter((name) => !names.includes(name));
  if (missing.length > 0) {
    throw new TypeError(
      `OAUTH_SCOPES leaves out ${missing.join(' ')}, which this app's API requires (GET /api/v1/envelopes needs envelopes:read, `
      + `POST envelopes:write): add ${missing.length === 1 ? 'it' : 'them'} (OAUTH_SCOPES="${[...names, ...missing].join(' ')}"), `
      + `or unset OAUTH_SCOPES for the app's own (${Object.keys(APP_SCOPES).join(' ')})`,
    );
  }
  return Object.fromEntries(names.map((name) => [name, Object.hasOwn(APP_SCOPES, name) ? APP_SCOPES[name]! : name]));
}
