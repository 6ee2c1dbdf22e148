// The rules an integration's editable fields follow: shared by registration, import and update.
import type { ClientFlow, TokenEndpointAuthMethod } from '../stores/contract.js';
import { checkRegisteredRedirectUri } from '../checks/registered-redirect-uri.js';
import { checkScopeTokens } from '../checks/scope.js';
import { UnknownScopeError } from './client-errors.js';
import { CLIENT_AUTH_METHODS, isClientAuthMethod } from '../checks/client-auth-methods.js';

/**
 * Unicode's bidirectional formatting characters (embeddings, overrides, isolates and the implicit marks): in a
 * name they reverse or reorder what is shown, so `Notes\u202Emoc.elgooG` reads as a Google address, and an
 * unclosed override reverses the consent page's own sentence after the name (Unicode TR #9; CVE-2021-42574's
 * "Trojan Source" is the same trick in code).
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** A surrogate not in a pair: with the `u` flag a pair reads as one astral code point, so only a lone one is `Cs`. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A letter, digit, punctuation mark or symbol: what makes a name show at all. Without one, a name of zero-width
 * spaces (U+200B, a format character JavaScript's `trim()` keeps) or of the blank letters below is an invisible
 * integration on the consent page ("Allow  ?"), a user cannot tell what they grant.
 */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
/** Letters and symbols that render as nothing: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), Braille's blank. */
const BLANK_LOOKALIKES = /[\u115f\u1160\u3164\uffa0\u2800]/gu;

/** Whether `text` shows at least one character (VISIBLE, not a blank look-alike). */
function showsSomething(text: string): boolean {
  return VISIBLE.test(text.replace(BLANK_LOOKALIKES, ''));
}

/** The code points of `text`, counted up to `stop` (a megabyte of name is not walked to the end). */
function countCodePoints(text: string, stop: number): number {
  let count = 0;
  for (const _ of text) if (++count >= stop) break;
  return count;
}

/**
 * The name shown on the consent page, trimmed. Control characters are refused: a name is printed by the CLI and
 * logged, and one could move a terminal's cursor or forge a line (`\x1b]0;…`, a newline). So are bidirectional
 * formatting characters (BIDI_CONTROLS), which let a name impersonate another or scramble the page around it; a
 * name written in a right-to-left script needs none of them.
 * @throws TypeError unless 1–200 characters (code points) of well-formed text without control or bidirectional
 *   formatting characters, showing at least one character. @see RFC 6749 §2.
 */
export function checkClientName(name: unknown): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  // Characters are code points: an emoji is one, not the two UTF-16 units `length` counts.
  if (!trimmed || countCodePoints(trimmed, 201) > 200) throw new TypeError('name must be 1–200 characters');
  // A lone surrogate has no UTF-8 form: a store would keep U+FFFD in its place, another name than the one given.
  if (LONE_SURROGATE.test(trimmed)) throw new TypeError('name must not contain lone surrogates (it is not valid Unicode text)');
  if (/[\u0000-\u001f\u007f-\u009f]/.test(trimmed)) throw new TypeError('name must not contain control characters');
  if (BIDI_CONTROLS.test(trimmed)) throw new TypeError('name must not contain bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)');
  if (!showsSomething(trimmed)) throw new TypeError('name must show at least one letter, digit, punctuation mark or symbol (not only spaces or invisible characters)');
  return trimmed;
}

/**
 * The redirect URIs of an integration of `flow`, without duplicates: at least one for the authorization_code
 * flow, none for client_credentials, each absolute, https (or http on loopback), without fragment. URIs in `kept`
 * (an update's, already registered) are not checked again: one registered before a rule was added stays usable, and
 * its integration can still be changed, until it is removed.
 * @throws TypeError naming the rule broken. @see RFC 6749 §3.1.2, §3.1.2.2; RFC 9700 §2.1.
 */
export function checkClientRedirectUris(flow: ClientFlow, uris: readonly string[] | undefined, kept: readonly string[] = []): string[] {
  const redirectUris = [...new Set(uris ?? [])];
  if (flow === 'authorization_code' && redirectUris.length === 0) {
    throw new TypeError('the authorization_code flow needs at least one redirect URI (RFC 6749 §3.1.2.2)');
  }
  if (flow === 'client_credentials' && redirectUris.length > 0) {
    throw new TypeError('the client_credentials flow has no redirect URI');
  }
  for (const uri of redirectUris) if (!kept.includes(uri)) checkRegisteredRedirectUri(uri);
  return redirectUris;
}

/**
 * Whether the integration requires PKCE: only an authorization_code integration can, since PKCE binds an
 * authorization request to its code exchange and a client_credentials integration makes neither. Accepted there,
 * the setting would be stored, shown by the CLI and checked nowhere: a promise the server does not keep.
 * @throws TypeError for a non-boolean, or `true` on a client_credentials integration. @see RFC 7636 §1, §4.4.1.
 */
export function checkClientRequirePkce(flow: ClientFlow, requirePkce: unknown): boolean {
  if (requirePkce === undefined) return false;
  if (typeof requirePkce !== 'boolean') throw new TypeError('requirePkce must be true or false');
  if (requirePkce && flow === 'client_credentials') {
    throw new TypeError('requirePkce applies to the authorization_code flow only: a client_credentials integration makes no authorization request (RFC 7636 §1)');
  }
  return requirePkce;
}

/**
 * The scopes an integration may be granted, without duplicates. With a vocabulary (`known`, the server's `scopes`
 * option: absent or empty when the caller does not know it), each must be in it: the router grants no other scope,
 * so one outside it would be a registration that promises what no token carries.
 * @throws TypeError for a token that is not a scope-token; UnknownScopeError for one outside `known`.
 * @see RFC 6749 §3.3, RFC 7591 §3.2.2.
 */
export function checkClientScopes(scopes: readonly string[] | undefined, known: readonly string[] = []): string[] {
  const allowedScopes = [...new Set(scopes ?? [])];
  checkScopeTokens(allowedScopes);
  const unknown = known.length === 0 ? [] : allowedScopes.filter((scope) => !known.includes(scope));
  if (unknown.length > 0) throw new UnknownScopeError(unknown, known);
  return allowedScopes;
}

/**
 * The one client authentication method an integration is restricted to, or `undefined` for none.
 * @throws TypeError for a method the package does not know. @see RFC 7591 §2 (`token_endpoint_auth_method`).
 */
export function checkClientAuthMethod(method: unknown): TokenEndpointAuthMethod | undefined {
  if (method !== undefined && !isClientAuthMethod(method)) {
    throw new TypeError(`tokenEndpointAuthMethod must be one of ${CLIENT_AUTH_METHODS.join(', ')}`);
  }
  return method;
}
