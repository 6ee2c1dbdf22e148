// The programmatic admin API: the integration lifecycle a host can put behind its own admin pages.
import type { OAuthClient, Store } from '../stores/contract.js';
import type { OAuthEvents } from '../events/oauth-events.js';
import type { ClientLifecycleEvent, RevocationCause } from '../events/event-types.js';
import { requireAdministration } from '../stores/check-store.js';
import { registerClient, type RegisterClientInput, type RegisteredClient } from '../clients/register-client.js';
import { updateClientSettings, type ClientUpdate, type UpdatedClient } from '../clients/update-client.js';
import { rotateClientSecretWithGrace, type RotateSecretOptions, type RotatedSecret } from '../clients/rotate-client-secret.js';
import { markClientDisabled, revokeDisabledClientTokens } from '../clients/disable-client.js';
import { markClientEnabled } from '../clients/enable-client.js';
import { deleteOAuthClient } from '../clients/delete-client.js';
import { revokeTokens, type RevokedTokens, type RevokeTokensTarget } from '../clients/revoke-tokens.js';
import { RevocationIncompleteError, UnknownClientError } from '../clients/client-errors.js';
import { importClients, type ImportClientsOptions, type ImportReport } from '../clients/import-clients.js';
import type { ImportRecord } from '../clients/import-file.js';
import { copyClient } from '../stores/copy-client.js';

/** What `OAuthAdmin.enableClient` did. */
export interface EnabledClient {
  /** True when the integration was enabled already (never disabled, an earlier call, or another one at the same moment). */
  readonly alreadyEnabled: boolean;
}

/** What `OAuthAdmin.disableClient` did. */
export interface DisabledClient {
  /** True when the integration was disabled already (by an earlier call, or by another one at the same moment). */
  readonly alreadyDisabled: boolean;
}

/** Options of `createOAuthAdmin`. */
export interface OAuthAdminOptions {
  /** Where lifecycle events go (`client.*`, `token.revoked`), with `issuer` and `ip` null. */
  readonly events?: OAuthEvents;
  /**
   * The router's scope vocabulary, `Object.keys` of its `scopes` option (`oauth.admin` has it already). Given and not
   * empty, `createClient`, `updateClient` and `importClients` refuse a scope outside it with `UnknownScopeError` (an
   * invalid row, for an import), since the router never grants one. Absent: any scope-token, as before.
   * @see RFC 7591 §3.2.2 (`invalid_client_metadata`).
   */
  readonly scopes?: readonly string[];
}

/**
 * The integration lifecycle. Every method validates like registration does, writes only the fields it
 * changes, and publishes audit events carrying ids and field names, never secrets. Mutations of an unknown
 * client_id reject with `UnknownClientError`; a store that cannot do an operation (no `deleteClient`, or a
 * contract-v1 store for a grace period) rejects with `StoreCapabilityError` before changing anything; bad
 * input rejects with `TypeError`. @see RFC 6749 §2, RFC 7009 §2.1, RFC 7591 §2.
 */
export interface OAuthAdmin {
  /** Registers an integration; the secret is in the result only (`registerClient`). */
  createClient(input: RegisterClientInput): Promise<RegisteredClient>;
  /** Every integration, in `compareClients` order. */
  listClients(): Promise<readonly OAuthClient[]>;
  /** One integration, or `null`. */
  getClient(clientId: string): Promise<OAuthClient | null>;
  /** Changes settings; see `updateClientSettings` for what narrowing does to issued tokens and codes. */
  updateClient(clientId: string, update: ClientUpdate): Promise<UpdatedClient>;
  /** New secret; with `gracePeriodSeconds` the old one works until then and no token is revoked. */
  rotateSecret(clientId: string, options?: RotateSecretOptions): Promise<RotatedSecret>;
  /**
   * Disables it and revokes every token and code it holds. `client.disabled` is published by the call that disabled
   * it only: a disable of a disabled integration (`alreadyDisabled`) revokes again and reports that `token.revoked` alone.
   */
  disableClient(clientId: string): Promise<DisabledClient>;
  /**
   * Lets it authenticate again; nothing revoked comes back. `client.enabled` is published by the call that enabled it
   * only: an enable of an enabled integration (`alreadyEnabled`: a retry, or another instance's at the same moment)
   * changes nothing and publishes nothing.
   */
  enableClient(clientId: string): Promise<EnabledClient>;
  /** Revokes its tokens, then removes it, its codes and consents (needs `store.clients.deleteClient`). */
  deleteClient(clientId: string): Promise<void>;
  /** Every token of an integration, of a user at one, or (`{ userId }` alone) of a user at every one. */
  revokeTokens(target: RevokeTokensTarget): Promise<RevokedTokens>;
  /** Imports existing integrations (`parseImportFile` rows) with their original issue dates (`importClients`). */
  importClients(records: readonly ImportRecord[], options?: ImportClientsOptions): Promise<ImportReport>;
}

/**
 * Creates the admin API over `store` (which needs the `administration` tier: checked on each call, so a
 * read-only deployment can still build the router). `createOAuthRouter` exposes one as `oauth.admin`,
 * publishing to the router's `events`; the `oauth-admin` command is a thin layer over the same functions.
 * @example
 * ```ts
 * const admin = createOAuthAdmin(store, { events });
 * const { client, clientSecret } = await admin.createClient({ name: 'Acme', flow: 'client_credentials' });
 * await admin.rotateSecret(client.clientId, { gracePeriodSeconds: 7 * 86400 });
 * ```
 * @see RFC 6749 §2 (client registration), RFC 7009 §2.1 (revocation), RFC 6819 §5.2.3.7 (secret rotation).
 */
export function createOAuthAdmin(store: Store, options: OAuthAdminOptions = {}): OAuthAdmin {
  const { events } = options;
  // An empty vocabulary is none (a router without `scopes`): it must not take the place of an import's own.
  const registration = options.scopes !== undefined && options.scopes.length > 0 ? { scopes: options.scopes } : {};
  const base = () => ({ time: new Date(), issuer: null, ip: null });
  function lifecycle(type: ClientLifecycleEvent['type'], clientId: string, extra: Partial<ClientLifecycleEvent> = {}): void {
    events?.publish({ ...base(), type, clientId, ...extra });
  }
  function revoked(cause: RevocationCause, extent: 'client' | 'user', clientId: string | null, userId: string | null): void {
    events?.publish({ ...base(), type: 'token.revoked', cause, extent, clientId, userId, grantId: null });
  }

  return {
    async createClient(input) {
      const registered = await registerClient(store, input, registration);
      lifecycle('client.created', registered.client.clientId);
      return registered;
    },
    // Copies: a host that trims what it shows (deleting `clientSecretHash`, say) must not be changing the object
    // a store keeps, which a store may hand out as it is (the router itself changes no record it reads).
    listClients: async () => (await requireAdministration(store, 'listClients').clients.listClients()).map(copyClient),
    async getClient(clientId) {
      const client = await store.clients.findClient(clientId);
      return client && copyClient(client);
    },
    async updateClient(clientId, update) {
      let updated: UpdatedClient;
      try {
        updated = await updateClientSettings(store, clientId, update, registration);
      } catch (error) {
        // The settings did change: that is recorded; the revocation that failed is not.
        if (error instanceof RevocationIncompleteError) lifecycle('client.updated', clientId, { fields: error.fields });
        throw error;
      }
      // An update that changed nothing is not an event: an audit trail lists what changed.
      if (updated.fields.length > 0) lifecycle('client.updated', clientId, { fields: updated.fields });
      if (updated.tokensRevoked) revoked('client_scopes_narrowed', 'client', clientId, null);
      return updated;
    },
    async rotateSecret(clientId, rotateOptions) {
      let rotated: RotatedSecret;
      try {
        rotated = await rotateClientSecretWithGrace(store, clientId, rotateOptions);
      } catch (error) {
        // The secret did change: that is recorded; the revocation that failed is not.
        if (error instanceof RevocationIncompleteError) lifecycle('client.secret_rotated', clientId, { previousSecretValidUntil: null });
        throw error;
      }
      lifecycle('client.secret_rotated', clientId, { previousSecretValidUntil: rotated.previousSecretValidUntil });
      if (rotated.tokensRevoked) revoked('client_secret_rotated', 'client', clientId, null);
      return rotated;
    },
    async disableClient(clientId) {
      const outcome = await markClientDisabled(store, clientId);
      if (outcome === null) throw new UnknownClientError(clientId);
      // Reported by the one call that disabled it: a retry (of a disable whose revocation failed, or of one whose
      // answer was lost) or a disable from another instance at the same moment changed no flag.
      const disabledHere = outcome === 'disabled';
      try {
        await revokeDisabledClientTokens(store, clientId);
      } catch (error) {
        // The integration is disabled: that is recorded; the revocation that failed is not.
        if (disabledHere) lifecycle('client.disabled', clientId);
        throw error;
      }
      if (disabledHere) lifecycle('client.disabled', clientId);
      // Every disable revokes again (a new revocation moment), which is what finishes one an earlier disable left
      // incomplete: reported each time, as `revokeTokens` is.
      revoked('client_disabled', 'client', clientId, null);
      return { alreadyDisabled: !disabledHere };
    },
    async enableClient(clientId) {
      const outcome = await markClientEnabled(store, clientId);
      if (outcome === null) throw new UnknownClientError(clientId);
      // An enable that changed no flag (a retry, another instance's at the same moment) is not an event, as an update
      // that changed nothing is not: an audit trail lists what changed.
      if (outcome === 'enabled') lifecycle('client.enabled', clientId);
      return { alreadyEnabled: outcome === 'already_enabled' };
    },
    async deleteClient(clientId) {
      await deleteOAuthClient(store, clientId);
      revoked('client_deleted', 'client', clientId, null);
      lifecycle('client.deleted', clientId);
    },
    async revokeTokens(target) {
      const result = await revokeTokens(store, target);
      if (result.extent === 'client') revoked('admin', 'client', result.clientIds[0]!, null);
      else revoked('admin', 'user', target.clientId ?? null, result.userId);
      return result;
    },
    async importClients(records, importOptions) {
      // The admin's vocabulary over the call's: an import through oauth.admin cannot lift the router's `scopes` option.
      const report = await importClients(store, records, { ...importOptions, ...registration });
      for (const row of report.rows) if (row.outcome === 'created') lifecycle('client.created', row.clientId!, { imported: true });
      return report;
    },
  };
}
