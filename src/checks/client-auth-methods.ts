// The client authentication methods this server can accept, and the validation of the option that narrows them.
import type { TokenEndpointAuthMethod } from '../stores/contract.js';
import { OptionsError } from '../options-error.js';

/**
 * Every method the server implements, in the order the metadata lists them: HTTP Basic first (SPEC §5.1,
 * and RFC 6749 §2.3.1: "The authorization server MUST support the HTTP Basic authentication scheme"), then
 * the form fields ("the authorization server MAY support including the client credentials in the
 * request-body").
 * @see RFC 6749 §2.3.1; RFC 7591 §2 (the method names).
 */
export const CLIENT_AUTH_METHODS: readonly TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** Whether a value names a method this server implements. @see RFC 7591 §2. */
export function isClientAuthMethod(value: unknown): value is TokenEndpointAuthMethod {
  return typeof value === 'string' && (CLIENT_AUTH_METHODS as readonly string[]).includes(value);
}

/**
 * Resolves the `clientAuthMethods` option: default every method; otherwise a non-empty list of known names,
 * kept in `CLIENT_AUTH_METHODS` order without repeats.
 * @throws OptionsError for anything else: an empty list would lock every client out.
 * @see RFC 6749 §2.3.1, RFC 8414 §2 (`token_endpoint_auth_methods_supported`).
 */
export function resolveClientAuthMethods(value: unknown): readonly TokenEndpointAuthMethod[] {
  if (value === undefined) return CLIENT_AUTH_METHODS;
  const names = CLIENT_AUTH_METHODS.map((m) => `"${m}"`).join(', ');
  if (!Array.isArray(value) || value.length === 0) {
    throw new OptionsError('clientAuthMethods', `must be a non-empty list of ${names}`);
  }
  for (const method of value as unknown[]) {
    if (!isClientAuthMethod(method)) {
      throw new OptionsError('clientAuthMethods', `lists ${JSON.stringify(method)}, which is not supported; use ${names}`);
    }
  }
  return CLIENT_AUTH_METHODS.filter((method) => (value as unknown[]).includes(method));
}
