// The embedded default Store: one SQLite file (better-sqlite3, WAL), survives restarts, shared with the CLI.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isSqliteDatabase, loadBetterSqlite3, type SqliteConnection, type SqliteDatabase } from './driver.js';
import type { AuthorizationCodeRecord, CompleteStore, ConsentRecord, ConsumeResult } from '../contract.js';
import { createSqliteClientStore } from './clients.js';
import { runSqlite } from './errors.js';
import { createSqliteKeyStore } from './keys.js';
import { codeToRow, consentToRow, rowToCode, rowToConsent } from './rows.js';
import { migrateSqliteSchema } from './schema.js';
import { prepareSqliteStatements } from './statements.js';
import { createSqliteTokenStore } from './tokens.js';

export type { SqliteDatabase } from './driver.js';

/** Options of `createSqliteStore`. @see RFC 6749 §10.3, §10.5 (the file holds hashed tokens and codes). */
export interface SqliteStoreOptions {
  /**
   * Path of the database file, relative to the working directory or absolute. Missing parent
   * directories are created (unless `fileMustExist`). `':memory:'` gives a private database that dies with the store.
   */
  readonly filename: string;
  /**
   * Seconds between sweeps of expired codes and tokens and of revocation tombstones past
   * `STORE_POLICY.revocationRetentionMs`; `0` turns the timer off. Default 60.
   */
  readonly sweepIntervalSeconds?: number;
  /**
   * Open an existing file only: no file and no directory is created, and a missing file throws an Error
   * with `code: 'ENOENT'` and `path`, as `fs` does. For tools that only read (`oauth-admin clients list`),
   * which must not leave an empty store behind a mistyped path. Default false.
   */
  readonly fileMustExist?: boolean;
}

/** The SQLite store: every tier of the contract, and `close()`. @see RFC 6749 §10.3–10.5, RFC 7009 §2.1. */
export type SqliteStore = CompleteStore & { close(): Promise<void> };

const DEFAULT_SWEEP_INTERVAL_SECONDS = 60;

function openDatabase(filename: string, mustExist: boolean): SqliteConnection {
  if (typeof filename !== 'string' || filename === '') {
    throw new TypeError('createSqliteStore: filename must be a non-empty string');
  }
  // Before any directory is made: a host without the driver is told what to install and left untouched.
  const Database = loadBetterSqlite3();
  if (filename === ':memory:') return new Database(filename);
  const path = resolve(filename);
  if (!mustExist) {
    mkdirSync(dirname(path), { recursive: true });
    return new Database(filename);
  }
  // Checked here because better-sqlite3 reports a missing file as SQLITE_CANTOPEN, a missing directory as a
  // TypeError; fileMustExist still keeps SQLite from creating a file deleted after this check.
  if (!existsSync(path)) {
    throw Object.assign(new Error(`createSqliteStore: no database file at ${path}`), { code: 'ENOENT', path });
  }
  return new Database(filename, { fileMustExist: true });
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
 * - `saveTokens` checks the revocation tombstones inside the transaction that inserts the tokens; every
 *   revocation records its tombstone and deletes in one transaction (see `createSqliteTokenStore`).
 * - `updateClient` is one `UPDATE` of the given columns only, so concurrent updates of different fields
 *   all take effect.
 * - Expired rows and tombstones read as absent at once and are deleted by an unref'd timer that `close()`
 *   clears.
 *
 * @example
 * ```ts
 * import { createSqliteStore } from 'express-oauth-router/stores/sqlite';
 * const store = createSqliteStore({ filename: './data/oauth.sqlite' });
 * // ... on shutdown:
 * await store.close?.();
 * ```
 * @throws TypeError for a bad option; Error when the file's schema is newer than this package; Error
 *   "The SQLite store needs better-sqlite3: npm install better-sqlite3@12" when the driver is not installed.
 * @see RFC 6749 §4.1.2 (single-use codes), §10.3–10.5 (tokens and codes kept hashed), RFC 7009 §2.1.
 */
export function createSqliteStore(options: SqliteStoreOptions | SqliteDatabase): SqliteStore {
  const ownsDatabase = !isSqliteDatabase(options);
  // A host's database is a better-sqlite3 Database like the one openDatabase makes; only its type is narrower.
  const db = isSqliteDatabase(options)
    ? (options as SqliteConnection)
    : openDatabase(options.filename, options.fileMustExist === true);
  const sweepSeconds = checkSweepInterval(
    isSqliteDatabase(options)
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

  const sweep = db.transaction((now: number) => {
    s.sweepCodes.run(now);
    s.sweepTokens.run(now);
    s.sweepRevokedGrants.run(now);
    s.sweepRevokedClients.run(now);
    s.sweepRevokedClientUsers.run(now);
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
    clients: createSqliteClientStore(s),

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

    tokens: createSqliteTokenStore(db, s),

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

