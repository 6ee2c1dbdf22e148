// The example MariaDB store's tables, created on first use, every id column in an exact (binary, no-pad) collation.
import type { MariaDb } from './db.js';

/** Backtick-quoted table names, prefix applied. */
export interface MariaDbTables {
  readonly clients: string;
  readonly codes: string;
  readonly tokens: string;
  /** Lock row and tombstone of each grant, each client, each (client, user): see tombstones.ts. */
  readonly grantRevocations: string;
  readonly clientRevocations: string;
  readonly userRevocations: string;
  readonly consents: string;
  readonly signingKeys: string;
  /** Named lock rows that serialise a check-then-insert (the first signing key). */
  readonly locks: string;
}

/** Builds the table names; the prefix was validated by resolveMariaDbOptions. */
export function mariaDbTables(prefix: string): MariaDbTables {
  const t = (name: string): string => `\`${prefix}${name}\``;
  return {
    clients: t('clients'), codes: t('codes'), tokens: t('tokens'),
    grantRevocations: t('grant_revocations'), clientRevocations: t('client_revocations'),
    userRevocations: t('user_revocations'), consents: t('consents'), signingKeys: t('signing_keys'), locks: t('locks'),
  };
}

/**
 * `utf8mb4_nopad_bin` compares ids byte for byte and keeps trailing spaces significant. Note that MariaDB's
 * `utf8mb4_bin` is NOT enough: it is a PAD SPACE collation, so `'abc' = 'abc '` and the two ids collide in a
 * primary key. `utf8mb4_general_ci` (the server default) is what the `caseInsensitiveIds` fault uses.
 */
export const EXACT_COLLATION = 'utf8mb4_nopad_bin';
export const DEFAULT_COLLATION = 'utf8mb4_general_ci';

const ID = 'VARCHAR(255) NOT NULL';
const WHEN = 'DATETIME(3) NOT NULL';

function statements(t: MariaDbTables, collation: string): string[] {
  const table = (name: string, body: string): string =>
    `CREATE TABLE IF NOT EXISTS ${name} (${body}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`;
  const tombstone = `revoked_at DATETIME(3) NULL, keep_until ${WHEN}, KEY (keep_until)`;
  return [
    table(t.clients, `client_id ${ID} PRIMARY KEY, client_secret_hash ${ID}, name TEXT NOT NULL,
      flow VARCHAR(32) NOT NULL, redirect_uris TEXT NOT NULL, allowed_scopes TEXT NOT NULL,
      require_pkce BOOLEAN NOT NULL, credentials_issued_at ${WHEN}, created_at ${WHEN}, disabled BOOLEAN NOT NULL,
      token_endpoint_auth_method VARCHAR(32) NULL, previous_client_secret_hash VARCHAR(255) NULL,
      previous_client_secret_expires_at DATETIME(3) NULL, KEY (created_at, client_id)`),
    // Tables made before the column existed get it in place (MariaDB's ADD COLUMN IF NOT EXISTS is idempotent).
    `ALTER TABLE ${t.clients} ADD COLUMN IF NOT EXISTS token_endpoint_auth_method VARCHAR(32) NULL`,
    `ALTER TABLE ${t.clients} ADD COLUMN IF NOT EXISTS previous_client_secret_hash VARCHAR(255) NULL`,
    `ALTER TABLE ${t.clients} ADD COLUMN IF NOT EXISTS previous_client_secret_expires_at DATETIME(3) NULL`,
    table(t.codes, `code_hash ${ID} PRIMARY KEY, grant_id ${ID}, client_id ${ID}, user_id ${ID},
      redirect_uri TEXT NOT NULL, scope TEXT NOT NULL, code_challenge VARCHAR(255) NULL, issuer TEXT NOT NULL,
      issued_at ${WHEN}, expires_at ${WHEN}, consumed_at DATETIME(3) NULL, KEY (expires_at)`),
    table(t.tokens, `token_hash ${ID} PRIMARY KEY, kind ENUM('access', 'refresh') NOT NULL, grant_id ${ID},
      client_id ${ID}, user_id VARCHAR(255) NULL, scope TEXT NOT NULL, issuer TEXT NOT NULL, expires_at ${WHEN},
      KEY (grant_id), KEY (client_id, user_id), KEY (expires_at)`),
    table(t.grantRevocations, `grant_id ${ID} PRIMARY KEY, ${tombstone}`),
    table(t.clientRevocations, `client_id ${ID} PRIMARY KEY, ${tombstone}`),
    table(t.userRevocations, `client_id ${ID}, user_id ${ID}, ${tombstone}, PRIMARY KEY (client_id, user_id)`),
    table(t.consents, `user_id ${ID}, client_id ${ID}, scope TEXT NOT NULL, granted_at ${WHEN},
      PRIMARY KEY (user_id, client_id), KEY (user_id, granted_at, client_id)`),
    table(t.signingKeys, `kid ${ID} PRIMARY KEY, algorithm VARCHAR(16) NOT NULL, private_key_pem TEXT NOT NULL,
      created_at ${WHEN}, KEY (created_at, kid)`),
    table(t.locks, `name VARCHAR(64) NOT NULL PRIMARY KEY`),
    `INSERT IGNORE INTO ${t.locks} (name) VALUES ('signing_keys')`,
  ];
}

/**
 * Wraps the database so that the first statement of the store creates the tables (CREATE TABLE IF NOT
 * EXISTS: idempotent, and safe when several instances start at once). A failed attempt (the database was
 * down) is forgotten, so the next call tries again. A real adapter would version its migrations as the
 * built-in PostgreSQL store does; an example keeps to one version.
 */
export function withSchema(db: MariaDb, tables: MariaDbTables, collation: string): MariaDb {
  let created: Promise<void> | null = null;
  function ready(): Promise<void> {
    created ??= (async () => {
      for (const sql of statements(tables, collation)) await db.run(sql);
    })().catch((err: unknown) => {
      created = null;
      throw err;
    });
    return created;
  }
  return {
    rows: async (sql, values) => (await ready(), db.rows(sql, values)),
    run: async (sql, values) => (await ready(), db.run(sql, values)),
    transaction: async (fn) => (await ready(), db.transaction(fn)),
    end: () => db.end(),
  };
}
