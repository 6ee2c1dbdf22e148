// The wire (snake_case) view of an integration for --json output: never the secret nor its hash.
import type { OAuthClient, TokenEndpointAuthMethod } from '../stores/contract.js';

/** An integration as the admin command prints it with `--json`. */
export interface ClientJson {
  readonly client_id: string;
  readonly name: string;
  readonly flow: OAuthClient['flow'];
  readonly redirect_uris: readonly string[];
  readonly scopes: readonly string[];
  readonly require_pkce: boolean;
  /** ISO 8601; decides the base address of the integration (SPEC §9). */
  readonly credentials_issued_at: string;
  readonly created_at: string;
  readonly disabled: boolean;
  /** RFC 7591 §2's name: the one method the integration is restricted to, or `null` when it may use any method the
   * server allows. Always present, so every integration printed has the same keys. */
  readonly token_endpoint_auth_method: TokenEndpointAuthMethod | null;
  /** ISO 8601 while a rotation's grace period runs (until then the previous secret works too), else `null`:
   * always present, as in `rotate-secret`'s output, so a script reads one shape. */
  readonly previous_secret_valid_until: string | null;
}

/** Until when the previous secret of a planned rotation still works, or `null` when none does now. */
export function previousSecretValidUntil(client: OAuthClient, now: number = Date.now()): Date | null {
  const until = client.previousClientSecretExpiresAt;
  return client.previousClientSecretHash != null && until instanceof Date && until.getTime() > now ? until : null;
}

/**
 * Picks the printable fields of an integration. Built field by field (not by spreading the record) so that
 * `clientSecretHash`, or any field a store adds later, can never slip into the output.
 */
export function toClientJson(client: OAuthClient): ClientJson {
  const grace = previousSecretValidUntil(client);
  return {
    client_id: client.clientId,
    name: client.name,
    flow: client.flow,
    redirect_uris: [...client.redirectUris],
    scopes: [...client.allowedScopes],
    require_pkce: client.requirePkce,
    credentials_issued_at: client.credentialsIssuedAt.toISOString(),
    created_at: client.createdAt.toISOString(),
    disabled: client.disabled,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? null,
    previous_secret_valid_until: grace === null ? null : grace.toISOString(),
  };
}

/** Writes one JSON document and a newline on stdout, for scripts (`jq`, `JSON.parse`). */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
