// Whether the SQLite store's writes fail because its file does, which readiness reports while it lasts.
import { isLockBusy, isStorageFailure, toStoreError } from './errors.js';

/** The outcome of the store's writes, as readiness reads it. @see createWriteHealth. */
export interface SqliteWriteHealth {
  /** Records a write's outcome: the error it failed with, or none when it committed. */
  note(error?: unknown): void;
  /**
   * Resolves when no write is failing for its storage, or when `probe` (a write) now goes through; otherwise
   * rejects with StoreUnavailableError. A lock met by the probe proves nothing either way and counts as ready.
   */
  check(probe: () => void): void;
}

/**
 * Remembers whether the last write that committed or failed for its storage failed: an I/O error, a read-only
 * or damaged file (errors.ts `isStorageFailure`). Reads still answer then (from the page cache, or from a file that
 * only refuses writes), so readiness's probe read alone calls a store ready that issues and revokes nothing, as an
 * outside run saw after the filesystem went read-only or was shut down under load (every write refused until a
 * restart, every probe ready). A full disk (SQLITE_FULL) is left out on purpose: the store resumes by itself once
 * there is room, and its reads keep serving bearer checks meanwhile. A store whose writes failed checks again at
 * each readiness probe, with a write of its own, so readiness comes back by itself once the file takes writes, even
 * while no request writes.
 * @see RFC 6749 §5.2 (`temporarily_unavailable`), DESIGN §3 (store outage: 503, nothing half-written).
 */
export function createWriteHealth(): SqliteWriteHealth {
  let failing = false;
  const health: SqliteWriteHealth = {
    note(error) {
      if (error === undefined) failing = false;
      else if (isStorageFailure(error)) failing = true;
    },
    check(probe) {
      if (!failing) return;
      try {
        probe();
        health.note();
      } catch (error) {
        if (isLockBusy(error)) return;
        health.note(error);
        throw toStoreError(error);
      }
    },
  };
  return health;
}
