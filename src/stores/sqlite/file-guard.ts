// Tells whether the file the store's connection has open is still the database at its path, and its WAL there.
import { existsSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { StoreUnavailableError } from '../store-unavailable-error.js';
import type { SqliteConnection } from './driver.js';

/** What the guard reads of a better-sqlite3 connection: its file, and whether it has one. */
export interface SqliteFileInfo {
  readonly name?: string;
  readonly memory?: boolean;
}

const sameFile = (a: Stats | undefined, b: Stats): boolean => a !== undefined && a.ino === b.ino && a.dev === b.dev;

/**
 * What is at `path` now, `undefined` when nothing is. A path that cannot be looked at (its directory's permissions
 * taken away: EACCES; a directory on the path replaced by a file: ENOTDIR; ELOOP, EIO) cannot vouch for the file
 * either, and is an outage of the store's files like a removed one: thrown as a StoreUnavailableError (503), never
 * the raw error, which the router would answer as a bug (500).
 */
function statAt(path: string, what: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new StoreUnavailableError(`SQLite store unavailable (cannot check the ${what}: ${typeof code === 'string' ? code : 'error'})`, { cause: err });
  }
}

/**
 * A check, run inside each write transaction before its COMMIT, that the database file is still the one opened
 * (same device and inode at the same path) and, in WAL mode, that its `-wal` is there. A file deleted or replaced
 * under a running store keeps taking writes into an inode nothing names: every token issued after that is gone at
 * the next start while clients hold it, and every revocation undone. The same goes for a deleted `-wal`, where the
 * commits of the running connection go until its next checkpoint: a crash before it loses them. The check makes
 * such a write fail (503) instead, one or two `stat` per transaction. In WAL mode the `-wal` exists while the
 * connection is open (it reads and writes it, and holds the lock that keeps another connection's close from
 * unlinking it), so a missing one was deleted by someone else. Only its presence is checked, not its inode: the connection itself makes
 * a new one when its journal mode goes to DELETE and back. In-memory and temporary databases have no path to check.
 * @throws StoreUnavailableError from the returned check, for a file gone or replaced, or a path it cannot look at.
 * @see DESIGN §2 (what a response confirmed survives), RFC 6749 §5.2 (`temporarily_unavailable`).
 */
export function createFileGuard(db: SqliteFileInfo, wal: boolean): () => void {
  if (db.memory === true || db.name === undefined || db.name === '' || db.name === ':memory:') return () => {};
  // Absolute now: a host that changes its working directory later must not make the file look replaced.
  const path = resolve(db.name);
  const opened = statSync(path, { throwIfNoEntry: false });
  if (!opened) return () => {};
  const walPath = `${path}-wal`;
  return () => {
    if (!sameFile(statAt(path, 'database file'), opened)) {
      throw new StoreUnavailableError('SQLite store unavailable (the database file was removed or replaced while open)');
    }
    // existsSync first, the cheap test on every commit; it also answers false for a -wal it may not look at, so
    // statAt then tells an unreadable path (its own error) from a deleted file.
    if (wal && !existsSync(walPath) && statAt(walPath, '-wal file') === undefined) {
      throw new StoreUnavailableError('SQLite store unavailable (the -wal file was removed while open)');
    }
  };
}

/**
 * Runs a write in one IMMEDIATE transaction that `guard` checks before its COMMIT: a write into a file nothing
 * names any more rolls back and fails (503) instead of being answered as done and lost at the next start. Each
 * outcome goes to `noteOutcome` (write-health.ts: readiness).
 */
export function createGuardedWrite(
  db: SqliteConnection, guard: () => void, noteOutcome: (error?: unknown) => void = () => {},
): <T>(write: () => T) => T {
  const transaction = db.transaction((write: () => unknown) => {
    const result = write();
    guard();
    return result;
  });
  return <T>(write: () => T): T => {
    let result: T;
    try {
      result = transaction.immediate(write) as T;
    } catch (error) {
      noteOutcome(error);
      throw error;
    }
    noteOutcome();
    return result;
  };
}
