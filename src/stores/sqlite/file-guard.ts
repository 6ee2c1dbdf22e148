// Tells whether the file the store's connection has open is still the database at its path.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { StoreUnavailableError } from '../store-unavailable-error.js';

/** What the guard reads of a better-sqlite3 connection: its file, and whether it has one. */
export interface SqliteFileInfo {
  readonly name?: string;
  readonly memory?: boolean;
}

/**
 * A check, run inside each write batch's transaction before its COMMIT, that the database file is still the one
 * opened (same device and inode at the same path). A file deleted or replaced under a running store keeps taking
 * writes into an inode nothing names: every token issued after that is gone at the next start, while clients hold
 * it. The check makes such a write fail (503) instead, one `stat` per batch. In-memory and temporary databases
 * have no path to check.
 * @throws StoreUnavailableError from the returned check, for a file gone or replaced.
 * @see DESIGN §2 (what a response confirmed survives), RFC 6749 §5.2 (`temporarily_unavailable`).
 */
export function createFileGuard(db: SqliteFileInfo): () => void {
  if (db.memory === true || db.name === undefined || db.name === '' || db.name === ':memory:') return () => {};
  // Absolute now: a host that changes its working directory later must not make the file look replaced.
  const path = resolve(db.name);
  const opened = statSync(path, { throwIfNoEntry: false });
  if (!opened) return () => {};
  return () => {
    const now = statSync(path, { throwIfNoEntry: false });
    if (now && now.ino === opened.ino && now.dev === opened.dev) return;
    throw new StoreUnavailableError('SQLite store unavailable (the database file was removed or replaced while open)');
  };
}
