// Runs one admin-API call against the store named by OAUTH_STORE: what every lifecycle command is made of.
import { createOAuthAdmin, type OAuthAdmin } from '../admin/create-oauth-admin.js';
import { withStore } from './with-store.js';

/**
 * Opens the existing store (never creating one: `no_store` otherwise), runs `work` on the admin API over it,
 * and closes the store whatever happens. Errors keep their class (`UnknownClientError`, `TypeError`, …),
 * which `runCli` maps to the documented codes and exit codes.
 * @see RFC 6749 §2 (client registration).
 */
export function withAdmin<T>(work: (admin: OAuthAdmin) => Promise<T>): Promise<T> {
  return withStore((store) => work(createOAuthAdmin(store)), { mustExist: true });
}
