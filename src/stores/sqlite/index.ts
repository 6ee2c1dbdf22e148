// The embedded default Store: one SQLite file (better-sqlite3, WAL), survives restarts, shared with the CLI.
import { closeSync, existsSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { makeDirectories } from './make-directories.js';
import { isSqliteDatabase, loadBetterSqlite3, type SqliteConnection, type SqliteDatabase } from './driver.js';
import type { AuthorizationCodeRecord, ClientCopies, CompleteStore, ConsentRecord, ConsumeResult } from '../contract.js';
import { createSqliteClientStore } from './clients.js';
import { runSqlite } from './errors.js';
import { createGroupCommit } from './group-commit.js';
import { createFileGuard, createGuardedWrite, type SqliteFileInfo } from './file-guard.js';
import { createWriteHealth } from './write-health.js';
import { createSqliteKeyStore } from './keys.js';
import { createLockWait } from './lock-wait.js';
import { createSqliteRateLimits } from './rate-limits.js';
import { codeToRow, consentToRow, rowToConsent, valuesToCode } from './rows.js';
import { migrateSqliteSchema } from './schema.js';
import { checkSqliteFileContents } from './file-contents.js';
import { openWithRetry } from './open-with-retry.js';
import { prepareSqliteStatements } from './statements.js';
import { createSqliteTokenStore } from './tokens.js';
import { createSqliteRevocationFeed } from './revocation-feed.js';
import { createSqliteChangeWatch } from './change-watch.js';
import { createRevisionCopies } from '../revision-copies.js';
import { integrationCopiesOption } from '../integration-copies-option.js';
import { prepareSqliteSweep } from './sweeper.js';
import { drainRevocation, prepareSqliteDrain } from './drain.js';
import { startSweepLoop } from '../sweep-loop.js';
import { guardStoreLogger, type StoreWarningLogger } from '../console-store-logger.js';
import { createSweepLog } from './sweep-log.js';
import { checkTimerRange } from '../timer-range.js';

export type { SqliteDatabase } from './driver.js';
export { sqliteLockWaitChannel, type SqliteLockWaitMessage } from './lock-wait.js';

/** Options of `createSqliteStore`. @see RFC 6749 §10.3, §10.5 (the file holds hashed tokens and codes). */
export interface SqliteStoreOptions {
  /**
   * Path of the database file, relative to the working directory or absolute. Missing parent
   * directories are created (unless `fileMustExist`), readable by the owner only (0700), as is a new file (0600) and
   * the -wal and -shm files SQLite makes beside it; an existing file or folder keeps its mode. `':memory:'` gives a
   * private database that dies with the store.
   */
  readonly filename: string;
  /**
   * Seconds between sweeps of expired codes and tokens, of revocation tombstones past
   * `STORE_POLICY.revocationRetentionMs` and of ended rate-limit windows, 200 rows per DELETE with the event
   * loop free between them; `0` turns the timer off (`sweepExpired()` still runs one). Default 60.
   */
  readonly sweepIntervalSeconds?: number;
  /**
   * Open an existing store only: no file and no directory is created, and a missing file throws an Error
   * with `code: 'ENOENT'` and `path`, as `fs` does; so does a file that holds no store (0 bytes, or a database
   * whose `user_version` is 0 or that has no `clients` table, such as another application's), which is left as it
   * was: not switched to WAL, not migrated. That Error's `holds` says which: `'empty'` or `'foreign'`. For tools that only read (`oauth-admin clients list`), which must
   * not leave a store behind a mistyped path. Default false.
   */
  readonly fileMustExist?: boolean;
  /**
   * Create a store in a new or empty file only (0 bytes, or no table, index, view or trigger and `user_version`
   * 0): any other file that holds no store (another application's database) throws an Error with `code: 'EEXIST'` and `path`, and is left as it was. For tools
   * that create a store (`oauth-admin clients create`), where such a file is a mistyped path. Default false:
   * a host may keep the store in its own database, by name or by passing its `Database`.
   */
  readonly refuseForeignFile?: boolean;
  /**
   * Milliseconds a store call waits for a lock another connection holds (the CLI writing, a backup, another
   * instance) before it rejects with StoreUnavailableError, which the router answers with 503
   * `temporarily_unavailable`. The wait never blocks the event loop: the call is retried on a timer, and
   * routes that need no store answer meanwhile. `0` answers 503 at the first lock met. Default 5000.
   */
  readonly lockTimeoutMs?: number;
  /**
   * When a commit is on disk. `'full'` (the default): SQLite syncs the WAL at every commit (the group commit
   * shares one sync among the token writes of one event-loop turn), so a token a client was handed, and a
   * revocation the CLI or an endpoint confirmed, survive a power cut or an OS crash. The one commit not synced
   * on its own is a turn's batch of code consumes: the sync of the tokens they lead to covers it, and a power cut
   * may only bring back a code that issued nothing (group-commit.ts). The sync runs inside the
   * synchronous driver, so the process waits for the disk once per commit. `'normal'`: the WAL is synced only
   * at checkpoints; a process crash loses nothing, but a power cut or an OS crash may roll back the last
   * commits: tokens already handed out stop working (their clients ask again), and a revocation already
   * confirmed may be undone until it is repeated. BENCHMARKS.md measures what each costs.
   * @see SQLite `PRAGMA synchronous` (WAL mode), RFC 7009 §2.1 (a revoked token stays revoked).
   */
  readonly synchronous?: SqliteSynchronous;
  /**
   * How many integrations this process keeps as it last read them, so that a token request reads none from the
   * store (each copy is checked by the save: the contract's `clientCopies`). Default 10,000, about 1–2 KB of heap
   * each. Past it the copy kept longest goes for each new one, so a registry larger than it reads that share of its
   * integrations again on each token request (half of them at twice the bound): set it to the number of
   * integrations that call. An integer from 1 to 10,000,000.
   */
  readonly maxIntegrationCopies?: number;
  /**
   * Receives what goes wrong in the store's background work, which no caller sees: a timed sweep that fails (another
   * process held the lock past `lockTimeoutMs`, an I/O error), once when it starts failing and once when a sweep gets
   * through again; a revocation's drain resumed at open that fails. The error is the second argument: log its message
   * and code (`describeStoreError`). Store calls that answer a request report their own errors to their caller, not
   * here. Default: one line per warning on stderr (`consoleStoreLogger`), as the PostgreSQL and Redis stores.
   */
  readonly logger?: StoreWarningLogger;
}

/** SQLite's `PRAGMA synchronous` levels the store offers. @see SqliteStoreOptions.synchronous. */
export type SqliteSynchronous = 'full' | 'normal';

/** Options of `createSqliteStore` for a host's open Database. @see SqliteStoreOptions. */
export type SqliteConnectionOptions = Pick<SqliteStoreOptions, 'sweepIntervalSeconds' | 'lockTimeoutMs' | 'synchronous' | 'maxIntegrationCopies' | 'logger'>;

/** The SQLite store: every tier of the contract, and `close()`. @see RFC 6749 §10.3–10.5, RFC 7009 §2.1. */
export type SqliteStore = CompleteStore & {
  readonly clientCopies: ClientCopies;
  close(): Promise<void>;
  /** Runs a sweep of expired rows now, in batches like the timer's; resolves when it is done. */
  sweepExpired(): Promise<void>;
};

const DEFAULT_SWEEP_INTERVAL_SECONDS = 60;
const DEFAULT_LOCK_TIMEOUT_MS = 5000;
/**
 * The page cache of a connection the store opens, in KiB (SQLite's default is 2 MiB). The token hash is a
 * random key, so each save and each lookup lands on a random leaf of the token index: past a few hundred
 * thousand live tokens, 2 MiB no longer holds the index's inner pages and every request reads pages back from
 * the OS. Measured (`node bench/scale.js`, 1,000,000 ÷ 1,000 live tokens): requireBearer 0.88 → 0.97 (0.91–0.97
 * over three runs); the token endpoint still writes a random leaf of an index larger than any cache (0.79–0.95,
 * within this VM's run-to-run swing). Pages are allocated as they are used.
 */
const STORE_CACHE_KIB = 32 * 1024;

/** The size a checkpoint truncates the WAL back to (`PRAGMA journal_size_limit`): 16 times the 4 MB a checkpoint normally leaves. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/** SQLite's busy_timeout is a C int of milliseconds. */
const MAX_LOCK_TIMEOUT_MS = 2_147_483_647;

function openDatabase(filename: string, mustExist: boolean): SqliteConnection {
  if (typeof filename !== 'string' || filename === '') {
    throw new TypeError('createSqliteStore: filename must be a non-empty string');
  }
  // Before any directory is made: a host without the driver is told what to install and left untouched.
  const Database = loadBetterSqlite3();
  if (filename === ':memory:') return new Database(filename);
  const path = resolve(filename);
  if (!mustExist) {
    // Private from the start: the file holds signing keys (JWT mode) and imported scrypt or bcrypt secrets, and
    // SQLite gives its -wal and -shm files the database file's mode. A file or folder that exists keeps its own.
    makeDirectories(dirname(path), 0o700);
    closeSync(openSync(path, 'a', 0o600));
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
  checkTimerRange('createSqliteStore: option "sweepIntervalSeconds"', seconds, 'seconds');
  return seconds;
}

function checkSynchronous(value: SqliteSynchronous): SqliteSynchronous {
  if (value !== 'full' && value !== 'normal') throw new TypeError("createSqliteStore: synchronous must be 'full' or 'normal'");
  return value;
}

function checkLockTimeout(ms: number): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_LOCK_TIMEOUT_MS) {
    throw new TypeError('createSqliteStore: lockTimeoutMs must be a number of milliseconds ≥ 0');
  }
  return ms;
}

/**
 * Creates the SQLite Store, the package's embedded default: all state in one file that survives restarts
 * and that the admin CLI may write while the app serves.
 *
 * - Pass `{ filename }` and the store opens (and on `close()` closes) the file; pass an open
 *   better-sqlite3 `Database` and it stays yours: `close()` then only stops the sweep timer.
 * - The connection runs in WAL mode, so readers never block the writer. It has `busy_timeout = 0`: a call
 *   that meets another connection's lock (the CLI, a backup) is retried on a timer, never by sleeping in
 *   the synchronous driver, so every other route keeps answering; past `lockTimeoutMs` it rejects with
 *   StoreUnavailableError (503). A host's Database gets `busy_timeout = 0` too.
 * - The schema is versioned with `PRAGMA user_version` and migrated in a `BEGIN IMMEDIATE` transaction.
 *   Only opening waits synchronously (up to `lockTimeoutMs`, before the store serves anything), and only
 *   when it must switch the file to WAL or migrate it while another process writes.
 * - `consumeCode` is one `UPDATE … WHERE consumed_at IS NULL … RETURNING`: exactly one of N concurrent
 *   calls wins, across connections and processes too. It commits through the same group commit as
 *   `saveTokens` (group-commit.ts): the consumes of one event-loop turn commit in a batch ahead of the
 *   turn's saves, unsynced, and are answered at once, so the tokens a consume leads to join the same turn's
 *   saves, whose one sync (under `synchronous = 'full'`) covers both; each call in its own savepoint, in order.
 * - `saveTokens` checks the revocation tombstones inside the transaction that inserts the tokens; every
 *   revocation records its tombstone in one short transaction, from which on lookups refuse its tokens, then deletes
 *   them in transactions of about 20 ms each, the event loop and the lock free between (see `createSqliteTokenStore`); a
 *   drain left undone (a process killed midway) is finished at the next open or sweep.
 * - `updateClient` is one `UPDATE` of the given columns only, so concurrent updates of different fields
 *   all take effect. `clientCopies` hands the token endpoint integrations without a read, and a save served
 *   from one is refused, inside its write transaction, once the integration's row holds other values or is gone.
 * - `revocations.mark()` (the `revocationFeed` tier) moves when another connection (the CLI, another instance)
 *   commits a revocation, seen by `PRAGMA data_version` and told apart from its other commits by schema 9's
 *   trigger-kept counters (change-watch.ts), and with every revocation on this connection, so `requireBearer`
 *   may cache verified tokens and still refuse a revoked one on the next request. A host that passes its own
 *   Database must not delete tokens through it behind the store's back.
 * - Expired rows and tombstones read as absent at once and are deleted by an unref'd timer, in batches of
 *   200 rows with the event loop free between them (sweeper.ts), a batch that meets another process's lock
 *   waiting for it as every call does; `close()` stops it and waits for the batch under way. The file does not shrink: freed pages are reused by later rows.
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
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore;
export function createSqliteStore(database: SqliteDatabase, options?: SqliteConnectionOptions): SqliteStore;
export function createSqliteStore(source: SqliteStoreOptions | SqliteDatabase, connectionOptions: SqliteConnectionOptions = {}): SqliteStore {
  const ownsDatabase = !isSqliteDatabase(source);
  const options: SqliteConnectionOptions = isSqliteDatabase(source) ? connectionOptions : source;
  const sweepSeconds = checkSweepInterval(options.sweepIntervalSeconds ?? DEFAULT_SWEEP_INTERVAL_SECONDS);
  const lockWait = createLockWait(checkLockTimeout(options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS));
  const synchronous = checkSynchronous(options.synchronous ?? 'full');
  const maxCopies = integrationCopiesOption('createSqliteStore', options.maxIntegrationCopies);
  const logger = guardStoreLogger(options.logger);
  // A host's database is a better-sqlite3 Database like the one openDatabase makes; only its type is narrower.
  const db = isSqliteDatabase(source)
    ? (source as SqliteConnection)
    : openDatabase(source.filename, source.fileMustExist === true);
  // A host's own Database may hold its tables beside the store's, and `:memory:` is new by definition: only a
  // file opened by name is checked.
  const expected = isSqliteDatabase(source) || source.filename === ':memory:'
    ? { path: '', mustBeStore: false, refuseForeign: false }
    : { path: resolve(source.filename), mustBeStore: source.fileMustExist === true, refuseForeign: source.refuseForeignFile === true };

  try {
    runSqlite(() => {
      // Opening is synchronous and comes before the store serves: here alone SQLite's own busy wait is
      // used, for the two steps that need the write lock on a new or older file (switching to WAL,
      // migrating), so that processes opening one file at once wait for each other.
      db.pragma(`busy_timeout = ${Math.ceil(lockWait.timeoutMs)}`);
      openWithRetry(lockWait.timeoutMs, () => {
        // Before the first step that writes (WAL, migrating): a file refused here must be left exactly as it was.
        checkSqliteFileContents(db, expected);
        // A host's own connection keeps the cache size the host gave it. Setting it reads the file's header,
        // so it waits for another connection's lock like the steps after it.
        if (ownsDatabase) db.pragma(`cache_size = -${STORE_CACHE_KIB}`);
        // A reader that holds a snapshot (a shell, a slow backup) keeps checkpoints from resetting the WAL, which then
        // grows by every commit meanwhile (an operator saw 254 MB in 15 s under load) and, without a limit, keeps that
        // size for good: truncated back to this once a checkpoint resets it.
        if (ownsDatabase) db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
        db.pragma('journal_mode = WAL');
        // FULL: a commit is synced before it returns, so what a response confirmed survives a power cut.
        db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
        migrateSqliteSchema(db);
      });
    });
  } catch (error) {
    if (ownsDatabase) db.close();
    throw error;
  }

  // Preparing reads the schema, which can meet another process's WAL recovery: still under the busy wait.
  const s = prepareSqliteStatements(db);
  const counters = createSqliteRateLimits(db, lockWait);
  const watch = createSqliteChangeWatch(db);
  const revocations = createSqliteRevocationFeed(watch);
  // From now on a lock is reported at once and waited for on a timer (lock-wait.ts).
  db.pragma('busy_timeout = 0');

  // Expired rows in batches of SQLITE_SWEEP_BATCH, the event loop free between them, after any drain a revocation
  // left undone (sweeper.ts, drain.ts).
  const drain = prepareSqliteDrain(db);
  let closed = false;
  // A failure once the store or the host's connection is closed is the shutdown itself, not worth a line.
  const working = (): boolean => !closed && db.open;
  const sweepRun = prepareSqliteSweep(db, drain, lockWait.timeoutMs);
  const sweepLog = createSweepLog(logger);
  const sweeper = startSweepLoop(function* sweep(now: number) {
    yield* sweepRun(now);
    // Not reached by a run that stop() ended (the loop returns the generator); one the close cut short is not said.
    if (working()) sweepLog.succeeded();
  }, sweepSeconds * 1000, (err) => {
    // Only timed runs come here: a sweepExpired() rejects to its caller.
    if (working()) sweepLog.failed(err);
  });
  // Code consumes and token saves: per event-loop turn, one batch of consumes, then one synced batch of the rest;
  // under FULL in WAL mode the consumes need no sync of their own, the save of their tokens covers them (group-commit.ts).
  const walMode = db.pragma('journal_mode', { simple: true }) === 'wal';
  const relaxAhead = synchronous === 'full' && walMode;
  // Every write is checked before it commits: into the files at the store's path, or not at all (file-guard.ts).
  const guard = createFileGuard(db as SqliteFileInfo, walMode);
  // Whether writes fail for the file's sake, which readiness reports until one goes through (write-health.ts).
  const writes = createWriteHealth();
  const guarded = createGuardedWrite(db, guard, writes.note);
  const groupCommit = createGroupCommit(db, lockWait, relaxAhead, guard, writes.note);
  const consume = groupCommit((codeHash: string): ConsumeResult<AuthorizationCodeRecord> => {
    const now = Date.now();
    const won = s.consumeCode.get(now, codeHash, now);
    if (won) return { kind: 'consumed', record: valuesToCode(codeHash, won) };
    // Not ours: either someone consumed it first (replay, still live; in this batch too, as calls of a
    // batch run one after the other) or it is unknown or expired.
    const live = s.findLiveCodeGrant.get(codeHash, now);
    return live ? { kind: 'replayed', grantId: live.grant_id, userId: live.user_id, clientId: live.client_id } : { kind: 'not_found' };
  }, { ahead: true });

  const isClosed = (): boolean => closed;
  // A drain left undone (its process killed midway) is resumed now, paced as a revocation's own, not at the first
  // timed sweep: its tokens are refused meanwhile, but they hold their space. A failure (another connection's lock
  // past lockTimeoutMs, the file guard) leaves it to the sweep, and is told to the logger (no caller waits for it);
  // the store closed meanwhile is not. The first failure ends the loop: one line at most per open.
  void (async () => {
    for (const target of drain.pending()) await drainRevocation(drain, lockWait, guarded, target, isClosed);
  })().catch((err: unknown) => {
    if (working()) {
      logger.warn('express-oauth-router: SQLite resumption of an interrupted revocation drain failed (its tokens stay refused; the next sweep finishes it)', err);
    }
  });

  const copies = createRevisionCopies(maxCopies);
  return {
    clients: createSqliteClientStore(db, s, lockWait, watch, guarded, copies, maxCopies),
    clientCopies: { find: copies.get },

    codes: {
      async saveCode(record: AuthorizationCodeRecord): Promise<void> {
        await lockWait.run(() => guarded(() => s.insertCode.run(codeToRow(record))));
      },
      async consumeCode(codeHash: string): Promise<ConsumeResult<AuthorizationCodeRecord>> {
        // After a lock the whole batch is rolled back and run again: the UPDATE either did nothing or won, never half.
        return consume(codeHash);
      },
    },

    tokens: createSqliteTokenStore(db, s, lockWait, groupCommit, guarded, revocations.bump, drain, isClosed),

    revocations: revocations.feed,

    consents: {
      async findConsent(userId: string, clientId: string): Promise<ConsentRecord | null> {
        return lockWait.run(() => {
          const row = s.findConsent.get(userId, clientId);
          return row ? rowToConsent(row) : null;
        });
      },
      async saveConsent(record: ConsentRecord): Promise<void> {
        await lockWait.run(() => guarded(() => s.upsertConsent.run(consentToRow(record))));
      },
      async revokeConsent(userId: string, clientId: string): Promise<void> {
        await lockWait.run(() => guarded(() => s.deleteConsent.run(userId, clientId)));
      },
      async listConsents(userId: string): Promise<readonly ConsentRecord[]> {
        return lockWait.run(() => s.listConsents.all(userId).map(rowToConsent));
      },
    },

    keys: createSqliteKeyStore(db, lockWait, guarded),

    rateLimits: counters.rateLimits,

    sweepExpired: () => sweeper.sweepNow(),

    // The file at the path is still the one open, and its -wal is there: the writes' own check, taken now. The -wal
    // exists as long as the connection is open (SQLite deletes it only at the last connection's close, and this one
    // holds a lock that keeps others from doing so): one deleted under it fails every write until a restart, whose
    // close still checkpoints what it held, so an orchestrator must be told to restart it.
    // Then, if the last writes failed for the file's sake, one write of its own: the schema version rewritten as it is.
    checkReady: (() => {
      const sameFileAtPath = createFileGuard(db as SqliteFileInfo, walMode);
      const probeWrite = (): void => {
        guarded(() => db.pragma(`user_version = ${Number(db.pragma('user_version', { simple: true }))}`));
      };
      return async (): Promise<void> => {
        sameFileAtPath();
        writes.check(probeWrite);
      };
    })(),

    async close(): Promise<void> {
      // A drain under way stops before its next chunk (tokens.ts).
      closed = true;
      // A sweep under way stops after its current batch; the file is closed only once it has.
      await sweeper.stop();
      if (ownsDatabase && db.open) db.close();
    },
  };
}

