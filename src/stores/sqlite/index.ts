// The embedded default Store: one SQLite file (better-sqlite3, WAL), survives restarts, shared with the CLI.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type {
  AuthorizationCodeRecord,
  ConsentRecord,
  ConsumeResult,
  OAuthClient,
  Store,
  TokenRecord,
} from '../contract.js';
import { runSqlite } from './errors.js';
import { createGroupCommit } from './group-commit.js';
import { migrateSqliteSchema } from './schema.js';
import { prepareSqliteStatements } from './statements.js';
import { createSqliteKeyStore } from './keys.js';
import {
  clientToRow,
  codeToRow,
  consentToRow,
  rowToClient,
  rowToCode,
  rowToConsent,
  rowToToken,
  tokenToRow,
} from './rows.js';

/** Options of `createSqliteStore`. @see RFC 6749 §10.3, §10.5 (the file holds hashed tokens and codes). */
export interface SqliteStoreOptions {
  /**
   * Path of the database file, relative to the working directory or absolute. Missing parent
   * directories are created. `':memory:'` gives a private database that dies with the store.
   */
  readonly filename: string;
  /** Seconds between sweeps of expired codes, tokens and revoked grants; `0` turns the timer off. Default 60. */
  readonly sweepIntervalSeconds?: number;
}

/** How long a revoked grant is remembered so that a racing `saveTokens` is refused (contract: ≥ 24 h). */
const REVOKED_GRANT_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_SWEEP_INTERVAL_SECONDS = 60;

function openDatabase(filename: string): Database.Database {
  if (typeof filename !== 'string' || filename === '') {
    throw new TypeError('createSqliteStore: filename must be a non-empty string');
  }
  if (filename !== ':memory:') mkdirSync(dirname(resolve(filename)), { recursive: true });
  return new Database(filename);
}

function checkSweepInterval(seconds: number): number {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    throw new TypeError('createSqliteStore: sweepIntervalSeconds must be a number of seconds ≥ 0');
  }
  return seconds;
}

/**
 * Creates the SQLite Store, the package's embedded default: all state in one file that survives restarts
 * and that the admin CLI may write while the app serves.
 *
 * - Pass `{ filename }` and the store opens (and on `close()` closes) the file; pass an open
 *   better-sqlite3 `Database` and it stays yours: `close()` then only stops the sweep timer.
 * - The connection runs in WAL mode with `busy_timeout = 5000`, so readers never block the writer and two
 *   processes wait for each other instead of failing with SQLITE_BUSY.
 * - The schema is versioned with `PRAGMA user_version` and migrated in a `BEGIN IMMEDIATE` transaction.
 * - `consumeCode` is one `UPDATE … WHERE consumed_at IS NULL … RETURNING`: exactly one of N concurrent
 *   calls wins, across connections and processes too.
 * - Expired rows read as absent at once and are deleted by an unref'd timer that `close()` clears.
 *
 * @example
 * ```ts
 * import { createSqliteStore } from 'express-oauth-router/stores/sqlite';
 * const store = createSqliteStore({ filename: './data/oauth.sqlite' });
 * // ... on shutdown:
 * await store.close?.();
 * ```
 * @throws TypeError for a bad option; Error when the file's schema is newer than this package.
 * @see RFC 6749 §4.1.2 (single-use codes), §10.3–10.5 (tokens and codes kept hashed), RFC 7009 §2.1.
 */
export function createSqliteStore(options: SqliteStoreOptions | Database.Database): Store {
  const ownsDatabase = !(options instanceof Database);
  const db = options instanceof Database ? options : openDatabase(options.filename);
  const sweepSeconds = checkSweepInterval(
    options instanceof Database
      ? DEFAULT_SWEEP_INTERVAL_SECONDS
      : (options.sweepIntervalSeconds ?? DEFAULT_SWEEP_INTERVAL_SECONDS),
  );

  try {
    // busy_timeout first: switching to WAL needs a lock another process may hold for a moment.
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    // NORMAL is durable in WAL mode except for the last transactions on power loss, and much faster.
    db.pragma('synchronous = NORMAL');
    migrateSqliteSchema(db);
  } catch (error) {
    if (ownsDatabase) db.close();
    throw error;
  }

  const s = prepareSqliteStatements(db);

  // Write transactions start IMMEDIATE: a deferred one that reads and then writes could fail with
  // SQLITE_BUSY_SNAPSHOT, which busy_timeout cannot wait out.
  const saveTokens = createGroupCommit(db, (access: TokenRecord, refresh: TokenRecord | null) => {
    const now = Date.now();
    if (s.findRevokedGrant.get(access.grantId, now)) return false;
    if (refresh && s.findRevokedGrant.get(refresh.grantId, now)) return false;
    s.insertToken.run(tokenToRow('access', access));
    if (refresh) s.insertToken.run(tokenToRow('refresh', refresh));
    return true;
  });
  const revokeGrant = db.transaction((grantId: string, now: number) => {
    s.upsertRevokedGrant.run(grantId, now + REVOKED_GRANT_TTL_MS);
    s.deleteGrantTokens.run(grantId);
  });
  const sweep = db.transaction((now: number) => {
    s.sweepCodes.run(now);
    s.sweepTokens.run(now);
    s.sweepRevokedGrants.run(now);
  });

  const timer =
    sweepSeconds > 0
      ? setInterval(() => {
          try {
            sweep.immediate(Date.now());
          } catch {
            // Reads already ignore expired rows, so a sweep that lost a lock race only delays cleanup;
            // the next tick retries. Nothing to report, and a throw here would crash the host process.
          }
        }, sweepSeconds * 1000)
      : null;
  // A store must never keep the process alive on its own.
  timer?.unref();

  return {
    clients: {
      async findClient(clientId: string): Promise<OAuthClient | null> {
        return runSqlite(() => {
          const row = s.findClient.get(clientId);
          return row ? rowToClient(row) : null;
        });
      },
      async saveClient(client: OAuthClient): Promise<void> {
        runSqlite(() => s.upsertClient.run(clientToRow(client)));
      },
      async listClients(): Promise<readonly OAuthClient[]> {
        return runSqlite(() => s.listClients.all().map(rowToClient));
      },
    },

    codes: {
      async saveCode(record: AuthorizationCodeRecord): Promise<void> {
        runSqlite(() => s.insertCode.run(codeToRow(record)));
      },
      async consumeCode(codeHash: string): Promise<ConsumeResult<AuthorizationCodeRecord>> {
        return runSqlite(() => {
          const now = Date.now();
          const won = s.consumeCode.get(now, codeHash, now);
          if (won) return { kind: 'consumed', record: rowToCode(won) };
          // Not ours: either someone consumed it first (replay, still live) or it is unknown or expired.
          const live = s.findLiveCodeGrant.get(codeHash, now);
          return live ? { kind: 'replayed', grantId: live.grant_id } : { kind: 'not_found' };
        });
      },
    },

    tokens: {
      async saveTokens(access: TokenRecord, refresh: TokenRecord | null): Promise<boolean> {
        return saveTokens(access, refresh);
      },
      async findAccessToken(tokenHash: string): Promise<TokenRecord | null> {
        return runSqlite(() => {
          const row = s.findToken.get(tokenHash, 'access', Date.now());
          return row ? rowToToken(row) : null;
        });
      },
      async findRefreshToken(tokenHash: string): Promise<TokenRecord | null> {
        return runSqlite(() => {
          const row = s.findToken.get(tokenHash, 'refresh', Date.now());
          return row ? rowToToken(row) : null;
        });
      },
      async revokeAccessToken(tokenHash: string): Promise<void> {
        runSqlite(() => s.deleteAccessToken.run(tokenHash));
      },
      async revokeGrant(grantId: string): Promise<void> {
        runSqlite(() => revokeGrant.immediate(grantId, Date.now()));
      },
      async revokeClientTokens(clientId: string, userId?: string): Promise<void> {
        return runSqlite(() => {
          if (userId === undefined) s.deleteClientTokens.run(clientId);
          else s.deleteClientUserTokens.run(clientId, userId);
        });
      },
    },

    consents: {
      async findConsent(userId: string, clientId: string): Promise<ConsentRecord | null> {
        return runSqlite(() => {
          const row = s.findConsent.get(userId, clientId);
          return row ? rowToConsent(row) : null;
        });
      },
      async saveConsent(record: ConsentRecord): Promise<void> {
        runSqlite(() => s.upsertConsent.run(consentToRow(record)));
      },
      async revokeConsent(userId: string, clientId: string): Promise<void> {
        runSqlite(() => s.deleteConsent.run(userId, clientId));
      },
      async listConsents(userId: string): Promise<readonly ConsentRecord[]> {
        return runSqlite(() => s.listConsents.all(userId).map(rowToConsent));
      },
    },

    keys: createSqliteKeyStore(db),

    async close(): Promise<void> {
      if (timer) clearInterval(timer);
      if (ownsDatabase && db.open) db.close();
    },
  };
}

