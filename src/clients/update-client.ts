// Changes an integration's settings with the rules of registration, and revokes what narrower scopes no longer allow.
import type { ClientChanges, OAuthClient, Store, TokenEndpointAuthMethod } from '../stores/contract.js';
import { requireAdministration } from '../stores/check-store.js';
import { checkClientAuthMethod, checkClientName, checkClientRedirectUris, checkClientRequirePkce, checkClientScopes } from './client-fields.js';
import { RevocationIncompleteError, UnknownClientError } from './client-errors.js';
import type { RegistrationOptions } from './register-client.js';

/** What `updateClientSettings` may change; every field is optional, and at least one is needed. */
export interface ClientUpdate {
  readonly name?: string;
  /** Replaces the redirect URIs (exact match, RFC 9700 §2.1). Not together with add/remove. */
  readonly redirectUris?: readonly string[];
  /** Adds these to the redirect URIs the integration has. */
  readonly addRedirectUris?: readonly string[];
  /** Removes these from the redirect URIs the integration has. */
  readonly removeRedirectUris?: readonly string[];
  /** Replaces the scopes the integration may be granted. */
  readonly allowedScopes?: readonly string[];
  readonly requirePkce?: boolean;
  /** Restricts the integration to one method; `null` lifts the restriction. */
  readonly tokenEndpointAuthMethod?: TokenEndpointAuthMethod | null;
}

/** What an update did. */
export interface UpdatedClient {
  readonly client: OAuthClient;
  /** The fields whose value changed and were written (camelCase, as in `ClientChanges`); empty when every value
   * given was the integration's already, and then nothing was written. */
  readonly fields: readonly string[];
  /** Whether every token and code of the integration was revoked (a scope was taken away, or all-access ended). */
  readonly tokensRevoked: boolean;
}

function redirectUrisOf(current: OAuthClient, update: ClientUpdate): readonly string[] | undefined {
  const adding = update.addRedirectUris ?? [];
  const removing = update.removeRedirectUris ?? [];
  if (update.redirectUris !== undefined && (adding.length > 0 || removing.length > 0)) {
    throw new TypeError('give either redirectUris (a replacement) or addRedirectUris/removeRedirectUris, not both');
  }
  if (update.redirectUris !== undefined) return update.redirectUris;
  if (adding.length === 0 && removing.length === 0) return undefined;
  const unknown = removing.filter((uri) => !current.redirectUris.includes(uri));
  if (unknown.length > 0) throw new TypeError(`not a redirect URI of this integration: ${unknown.join(' ')}`);
  return [...current.redirectUris.filter((uri) => !removing.includes(uri)), ...adding];
}

/** Whether two lists hold the same values: their order means nothing to matching (exact, per value). */
function sameValues(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value) => b.includes(value)) && b.every((value) => a.includes(value));
}

/** Whether `value` is what the integration has already, so writing it would change nothing. */
function alreadyHas(current: OAuthClient, field: keyof ClientChanges, value: ClientChanges[keyof ClientChanges]): boolean {
  switch (field) {
    case 'redirectUris':
      return sameValues(current.redirectUris, value as readonly string[]);
    case 'allowedScopes':
      return sameValues(current.allowedScopes, value as readonly string[]);
    case 'tokenEndpointAuthMethod':
      return (current.tokenEndpointAuthMethod ?? null) === value;
    default:
      return current[field] === value;
  }
}

/**
 * Whether replacing `before` with `after` takes a scope away. An integration without scopes is all-access under
 * the router's default (`allAccessWithoutScopes`), so giving it scopes narrows it: its tokens, and its grants'
 * refresh tokens, carry every scope. Counted so whatever the option (a store has no router's options); with
 * the option off it costs a new authorization, never an access kept.
 * @see RFC 6749 §3.3, §6; DESIGN §5 (scopes).
 */
function takesScopeAway(before: readonly string[], after: readonly string[]): boolean {
  if (before.length === 0) return after.length > 0;
  return before.some((scope) => !after.includes(scope));
}

/**
 * Changes an integration's name, redirect URIs, scopes, PKCE requirement or authentication method, checked
 * by the rules of registration (`client-fields.ts`). Only the fields given are written, in one
 * `updateClient`. What a narrower setting does to what was issued under the old one:
 * - scopes taken away, or given to an integration that had none (all-access by default): every token of the
 *   integration is revoked, and every code issued before (the store cannot pick tokens by scope, and a refresh
 *   token would otherwise keep minting the removed scope, since RFC 6749 §6 refreshes keep the scope granted);
 *   users authorize again. The token endpoint also refuses a code or refresh token whose scope the integration
 *   may no longer be granted, so a narrowing that raced another update and revoked nothing still holds for
 *   them; only access tokens issued in between live on, until they expire;
 * - redirect URIs removed, or PKCE turned on: tokens are kept (neither setting bears on a token once issued);
 *   a code issued for a removed redirect URI, or without a code_challenge, is refused at the token endpoint,
 *   which checks the code against the integration's current settings;
 * - name and authentication method: apply to the next request; nothing issued is touched.
 * `addRedirectUris`/`removeRedirectUris` are applied to the record as read just before the write. A value the
 * integration already has is left out (a list counts as the same when it holds the same values); when none is
 * left, nothing is written and `fields` is empty.
 * `options.scopes` is the vocabulary a new scope list is checked against, as registration checks it.
 * @throws UnknownClientError; TypeError for a value registration would refuse (UnknownScopeError for a scope outside
 *   `options.scopes`), or an empty update; RevocationIncompleteError
 *   when a narrowing was written but the revocation it needs failed.
 * @see RFC 6749 §2, §3.1.2.2, §3.3, §6; RFC 7636 §4.4.1; RFC 7591 §2; RFC 9700 §2.1; RFC 7009 §2.1.
 */
export async function updateClientSettings(
  store: Store, clientId: string, update: ClientUpdate, options: RegistrationOptions = {},
): Promise<UpdatedClient> {
  const admin = requireAdministration(store, 'updateClient');
  const current = await admin.clients.findClient(clientId);
  if (!current) throw new UnknownClientError(clientId);
  const changes: { -readonly [K in keyof ClientChanges]: ClientChanges[K] } = {};
  if (update.name !== undefined) changes.name = checkClientName(update.name);
  const redirectUris = redirectUrisOf(current, update);
  if (redirectUris !== undefined) changes.redirectUris = checkClientRedirectUris(current.flow, redirectUris, current.redirectUris);
  if (update.allowedScopes !== undefined) changes.allowedScopes = checkClientScopes(update.allowedScopes, options.scopes);
  if (update.requirePkce !== undefined) changes.requirePkce = checkClientRequirePkce(current.flow, update.requirePkce);
  if (update.tokenEndpointAuthMethod !== undefined) {
    changes.tokenEndpointAuthMethod = update.tokenEndpointAuthMethod === null ? null : checkClientAuthMethod(update.tokenEndpointAuthMethod)!;
  }
  if (Object.keys(changes).length === 0) throw new TypeError('nothing to update: give at least one field to change');
  // A value the integration has already is not written: reported as no change (an automation re-applying its
  // settings sees `fields: []`), and the record's revision stays, so no instance drops its copy for nothing.
  for (const field of Object.keys(changes) as (keyof ClientChanges)[]) {
    if (alreadyHas(current, field, changes[field])) delete changes[field];
  }
  const fields = Object.keys(changes);
  if (fields.length === 0) return { client: current, fields, tokensRevoked: false };
  const client = await admin.clients.updateClient(clientId, changes);
  if (!client) throw new UnknownClientError(clientId);
  const narrowed = changes.allowedScopes !== undefined && takesScopeAway(current.allowedScopes, changes.allowedScopes);
  // Narrowed but not revoked: said so, since a second update finds nothing to change and would revoke nothing.
  if (narrowed) {
    try {
      await admin.tokens.revokeClientTokens(clientId);
    } catch (error) {
      throw new RevocationIncompleteError(clientId, null, error, `the scopes of ${JSON.stringify(clientId)} were narrowed`, fields);
    }
  }
  return { client, fields, tokensRevoked: narrowed };
}
