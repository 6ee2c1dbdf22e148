// The SQLite store's schema and its versioned, idempotent migration (PRAGMA user_version).
import type { SqliteConnection } from './driver.js';

/** A migration's SQL, or a function of the moment it runs (ms, read under the write lock) that gives it. */
type Migration = string | ((now: number) => string);

/**
 * One entry per schema version: entry `i` takes a database from version `i` to `i + 1`. Append only;
 * never edit a released entry, since files in the field are already at that version.
 *
 * Dates are integer milliseconds since the epoch and arrays JSON text. No foreign keys: the contract lets
 * a deployment keep integrations in another backend, so tokens must not depend on a local clients row.
 * No COLLATE anywhere: ids compare with SQLite's default BINARY collation, exactly (no case folding, no
 * trailing-space padding), as the contract requires.
 */
const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE clients (
    client_id TEXT PRIMARY KEY,
    client_secret_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    flow TEXT NOT NULL CHECK (flow IN ('authorization_code', 'client_credentials')),
    redirect_uris TEXT NOT NULL,
    allowed_scopes TEXT NOT NULL,
    require_pkce INTEGER NOT NULL,
    credentials_issued_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    disabled INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX clients_created_at ON clients (created_at, client_id);

  CREATE TABLE codes (
    code_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    scope TEXT NOT NULL,
    code_challenge TEXT,
    issuer TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    consumed_at INTEGER
  ) STRICT;
  CREATE INDEX codes_expires_at ON codes (expires_at);

  CREATE TABLE tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    user_id TEXT,
    scope TEXT NOT NULL,
    issuer TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX tokens_grant_id ON tokens (grant_id);
  CREATE INDEX tokens_client_user ON tokens (client_id, user_id);
  CREATE INDEX tokens_expires_at ON tokens (expires_at);

  CREATE TABLE revoked_grants (
    grant_id TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX revoked_grants_expires_at ON revoked_grants (expires_at);

  CREATE TABLE consents (
    user_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id)
  ) STRICT;
  `,
  // 2: package-generated signing keys of JWT access tokens (RFC 9068), see keys.ts.
  `
  CREATE TABLE signing_keys (
    kid TEXT PRIMARY KEY,
    algorithm TEXT NOT NULL CHECK (algorithm IN ('ES256', 'RS256', 'EdDSA')),
    private_key_pem TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  `,
  // 3: store contract v1. A code's issued_at bounds which revocations void it; rows already there get the
  // earliest moment a 10-minute code can have been issued at (the conservative value). The column is added,
  // not rebuilt, and defaults to 0 (the epoch, voided by any remembered revocation): a process of the
  // previous version still serving from this file (the CLI upgraded first) keeps inserting codes, and
  // they read back on the cautious side. Revocations of an integration, or of one user at it, are
  // tombstones keyed by their ids, with the latest moment; WITHOUT ROWID keeps each in its key's b-tree.
  `
  ALTER TABLE codes ADD COLUMN issued_at INTEGER NOT NULL DEFAULT 0;
  UPDATE codes SET issued_at = expires_at - 600000;

  CREATE TABLE revoked_clients (
    client_id TEXT PRIMARY KEY,
    revoked_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX revoked_clients_expires_at ON revoked_clients (expires_at);

  CREATE TABLE revoked_client_users (
    client_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    revoked_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (client_id, user_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX revoked_client_users_expires_at ON revoked_client_users (expires_at);
  `,
  // 4: the one client authentication method an integration may use (RFC 7591 `token_endpoint_auth_method`).
  // NULL, what every existing row gets, means any method the server allows: integrations keep working as they
  // did. Added, not rebuilt, so a process of the previous version still serving from this file is unaffected
  // (it reads with SELECT * and inserts naming its columns). No CHECK: a later method needs no table rebuild,
  // and an unknown value matches no method, so it fails closed.
  `
  ALTER TABLE clients ADD COLUMN token_endpoint_auth_method TEXT;
  `,
  // 5: counters of failed sign-ins and client authentications (the rateLimits tier, see rate-limits.ts), so
  // every process on the file counts together. Keys are hashes the router builds: no user input, no secret.
  `
  CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX rate_limits_expires_at ON rate_limits (expires_at);
  `,
  // 6: the secret a planned rotation replaced, and until when it still authenticates (the grace period).
  // Both NULL, what every existing row gets, means no previous secret. Added, not rebuilt, so a process of
  // the previous version still serving from this file is unaffected (it never reads them: no grace there).
  `
  ALTER TABLE clients ADD COLUMN previous_client_secret_hash TEXT;
  ALTER TABLE clients ADD COLUMN previous_client_secret_expires_at INTEGER;
  `,
  // 7: an integration's codes and consents found by its id. Deleting an integration read both tables whole inside
  // its write transaction, and the synchronous driver holds the event loop meanwhile: 60–230 ms with a million
  // consents and 200,000 codes. One more index entry per code and consent saved, both paced by people signing in.
  // Indexes only, so a process of the previous version still serving from this file is unaffected.
  `
  CREATE INDEX codes_client_id ON codes (client_id);
  CREATE INDEX consents_client_id ON consents (client_id);
  `,
  // 8: revoking an integration's (or a user's) tokens is a tombstone first, then deletes in short transactions (drain.ts):
  // one transaction deleting a million tokens held the write lock, and the event loop, for 7–16 s. A token's issued_at is
  // its save's authorizedAt, so a lookup refuses it under a tombstone at or after that moment, exactly as the save would
  // have been refused, while its row waits for the drain; `draining` marks a tombstone whose tokens are not all deleted
  // yet (the next open or sweep finishes an interrupted drain, and the sweep keeps the tombstone until it has).
  // The default of issued_at is the moment of this migration, a literal, so no row is rewritten: every row already
  // here survived every revocation recorded before (the previous version deleted in the revocation's transaction),
  // and any later one refuses it. A process of the previous version still serving from this file inserts without
  // the column, and its rows read the same moment: refused under any revocation recorded after the upgrade, even one
  // they were saved after (the cautious side; they go as the drain meets them). Its revocations still delete in one
  // transaction and leave `draining` at 0, which is what they did. Columns added, not rebuilt; partial indexes, so
  // finding the drains left reads only them.
  (now) => `
  ALTER TABLE tokens ADD COLUMN issued_at INTEGER NOT NULL DEFAULT ${now};
  ALTER TABLE revoked_clients ADD COLUMN draining INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE revoked_client_users ADD COLUMN draining INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX revoked_clients_draining ON revoked_clients (client_id) WHERE draining = 1;
  CREATE INDEX revoked_client_users_draining ON revoked_client_users (client_id, user_id) WHERE draining = 1;
  `,
  // 9: what another connection's commit changed, for the caches (change-watch.ts). PRAGMA data_version moves at every
  // commit of another connection, so each process's bearer cache and integration copies were dropped whenever any
  // other process issued a token: with two processes under load, at nearly every request. Triggers count what can
  // make a cached answer wrong, whoever writes it (this package of any version, the CLI, a host's own SQL): what
  // findToken reads, an access token deleted or changed (a revocation, a sweep, a deleted integration) and an
  // integration or user tombstone written, and an integration written. Not counted: a refresh token's deletion (the
  // bearer cache never holds one); a grant tombstone (findToken does not read it: a grant's revocation deletes its
  // tokens, counted); an access token's deletion that a tombstone already refuses, as findToken reads them (the
  // tombstone's own write was counted, and no lookup has answered the token since, so no cache holds it). So a
  // drain's chunks, a million rows and their grants in thousands of commits, leave every other process's cache as it
  // was. A process of the previous version still serving from this file writes
  // through the same triggers, and drops its caches as it did.
  `
  CREATE TABLE change_counters (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    revocations INTEGER NOT NULL,
    clients INTEGER NOT NULL
  ) STRICT;
  INSERT INTO change_counters (id, revocations, clients) VALUES (1, 0, 0);
  CREATE TRIGGER tokens_delete_counted AFTER DELETE ON tokens WHEN OLD.kind = 'access'
    AND NOT EXISTS (SELECT 1 FROM revoked_clients r WHERE r.client_id = OLD.client_id AND r.revoked_at >= OLD.issued_at)
    AND NOT EXISTS (SELECT 1 FROM revoked_client_users r
                    WHERE r.client_id = OLD.client_id AND r.user_id = OLD.user_id AND r.revoked_at >= OLD.issued_at)
    BEGIN UPDATE change_counters SET revocations = revocations + 1; END;
  CREATE TRIGGER tokens_update_counted AFTER UPDATE ON tokens
    BEGIN UPDATE change_counters SET revocations = revocations + 1; END;
  CREATE TRIGGER revoked_clients_insert_counted AFTER INSERT ON revoked_clients
    BEGIN UPDATE change_counters SET revocations = revocations + 1; END;
  CREATE TRIGGER revoked_clients_update_counted AFTER UPDATE ON revoked_clients
    BEGIN UPDATE change_counters SET revocations = revocations + 1; END;
  CREATE TRIGGER revoked_client_users_insert_counted AFTER INSERT ON revoked_client_users
    BEGIN UPDATE change_counters SET revocations = revocations + 1; END;
  CREATE TRIGGER revoked_client_users_update_counted AFTER UPDATE ON revoked_client_users
    BEGIN UPDATE change_counters SET revocations = revocations + 1; END;
  CREATE TRIGGER clients_insert_counted AFTER INSERT ON clients
    BEGIN UPDATE change_counters SET clients = clients + 1; END;
  CREATE TRIGGER clients_update_counted AFTER UPDATE ON clients
    BEGIN UPDATE change_counters SET clients = clients + 1; END;
  CREATE TRIGGER clients_delete_counted AFTER DELETE ON clients
    BEGIN UPDATE change_counters SET clients = clients + 1; END;
  `,
];

/** What migrating needs: no statement is prepared, so a better-sqlite3 `Database` fits as typed by its own package. */
type MigratedDatabase = Omit<SqliteConnection, 'prepare'>;

/** The schema version this code writes and reads. @see RFC 6749 §10.3, §10.5 (what the schema stores). */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

function readVersion(db: MigratedDatabase): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the database to `SQLITE_SCHEMA_VERSION`. Idempotent, and safe when two processes open the same
 * file at once (the app and the admin CLI): the version is re-read inside a `BEGIN IMMEDIATE` transaction,
 * which holds the write lock, so only one of them runs each migration and the other sees it done.
 * @param target the version to stop at; only tests pass one, to build a file as an older release left it.
 * @throws Error when the file was written by a newer version of this package.
 * @see RFC 6749 §10.3, §10.5 (hashed codes and tokens are what these tables hold).
 */
export function migrateSqliteSchema(db: MigratedDatabase, target: number = SQLITE_SCHEMA_VERSION): void {
  if (!Number.isInteger(target) || target < 1 || target > SQLITE_SCHEMA_VERSION) {
    throw new RangeError(`migrateSqliteSchema: target must be a schema version from 1 to ${SQLITE_SCHEMA_VERSION}`);
  }
  // Fast path without the write lock: the usual case is an up-to-date file.
  if (readVersion(db) === target) return;
  db.transaction(() => {
    const from = readVersion(db);
    if (from > SQLITE_SCHEMA_VERSION) {
      throw new Error(
        `the SQLite store file has schema version ${from}, newer than ${SQLITE_SCHEMA_VERSION}: upgrade express-oauth-router`,
      );
    }
    if (from >= target) return;
    for (const migration of MIGRATIONS.slice(from, target)) db.exec(typeof migration === 'string' ? migration : migration(Date.now()));
    // user_version lives in the file header and is part of the transaction: all or nothing.
    db.pragma(`user_version = ${target}`);
  }).immediate();
}
