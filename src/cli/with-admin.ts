// Runs one admin-API call against the store named by OAUTH_STORE: what every lifecycle command is made of.
import { createOAuthAdmin, type OAuthAdmin } from '../admin/create-oauth-admin.js';
import { withAuditLog } from './audit-log.js';
import { checkClock } from './check-clock.js';
import { withStore, type WithStoreOptions } from './with-store.js';
import { vocabularyOption } from './scope-vocabulary.js';

/** What `withAdmin` opens, and whether the command registers scopes (`create`, `update --scope`). */
export interface WithAdminOptions extends WithStoreOptions {
  /**
   * Check registrations against OAUTH_SCOPES. Only a command that registers scopes reads it: a malformed value (an env
   * file that kept its quotes) must not stop a revocation, a disable or a rotation, which grant no scope.
   */
  readonly scopes?: boolean;
}

/**
 * Opens the store (by default an existing one only, never creating it: `no_store` otherwise), runs `work` on
 * the admin API over it, and closes the store whatever happens. The admin API publishes its `client.*` and
 * `token.revoked` events to the OAUTH_AUDIT_LOG file when that is set (withAuditLog). It first checks this
 * machine's clock against the store server's (`checkClock`: `clock_skew`, nothing changed). Errors keep their class
 * (`UnknownClientError`, `TypeError`, …), which `runCli` maps to the documented codes and exit codes. With OAUTH_SCOPES
 * set, a command that registers scopes (`options.scopes`) checks them against that vocabulary (`scopeVocabulary`).
 * @see RFC 6749 §2 (client registration); README "Audit events" (every security-relevant outcome is an event).
 */
export async function withAdmin<T>(work: (admin: OAuthAdmin) => Promise<T>, options: WithAdminOptions = { mustExist: true }): Promise<T> {
  // Read before the store is opened: a malformed OAUTH_SCOPES is a usage error that changes (and creates) nothing.
  const vocabulary = options.scopes === true ? vocabularyOption() : {};
  return withAuditLog((events) => withStore(async (store) => {
    // Every change takes this machine's clock (a revocation's moment above all): refuse it before anything is written.
    await checkClock(store);
    return work(createOAuthAdmin(store, { ...vocabulary, ...(events ? { events } : {}) }));
  }, options));
}

/**
 * `withAdmin` for a command that only reads (`list`, `show`): it records nothing, so it neither opens the
 * OAUTH_AUDIT_LOG file nor fails when that file cannot be written (README: reads record nothing).
 */
export function withReadingAdmin<T>(work: (admin: OAuthAdmin) => Promise<T>): Promise<T> {
  return withStore((store) => work(createOAuthAdmin(store)), { mustExist: true });
}
