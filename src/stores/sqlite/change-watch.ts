// What may have changed on a SQLite file: other connections' commits (data_version, once a turn) and this connection's own writes.
import type { SqliteConnection } from './driver.js';

/** Writes committed on one connection that its own data_version cannot see, by any store object using it. */
export interface OwnWrites {
  /** Revocations (token, grant, integration, user at an integration). */
  revocations: number;
  /** Integration writes (create, update, delete). */
  clients: number;
}

const ownWrites = new WeakMap<SqliteConnection, OwnWrites>();

/** The watch of one store's connection. */
export interface SqliteChangeWatch {
  /** This connection's own writes, shared by every store object on it: bump after each commits (or fails). */
  readonly own: OwnWrites;
  /**
   * A mark (a generation) that moves when another connection (the CLI, another process, a second store on
   * the same file) has committed or this one's `own[kind]` count has; `null` while the file cannot be read
   * (closed, locked, corrupted), when nothing may be served from a cache. `perRequest` reads data_version
   * on every call instead of once per turn.
   */
  markOf(kind: keyof OwnWrites, perRequest?: boolean): () => number | null;
}

/**
 * `PRAGMA data_version` changes when any other connection commits, and only then. It is read once per
 * event-loop turn (the first call of a turn reads it; a setImmediate forgets it when the turn ends), the
 * per-turn check issue 10 allows: the requests a turn serves were read from their sockets in that turn's
 * poll phase, i.e. they were in flight while the check ran, so none can have been sent after a commit the
 * check missed had been answered, but for the few hundred µs a turn lasts under load. Reading the pragma is
 * a read transaction (the WAL read lock taken and dropped: two fcntl calls and a getpid), 1.4 µs of CPU
 * alone and 5–9 % of a cached bearer check's busy samples under load when it was read per request.
 * Commits on this connection are invisible to its data_version, so its writers count them in `own`, which
 * callers compare on every call (no turn delay there).
 * @see RFC 7009 §2.1, https://sqlite.org/pragma.html#pragma_data_version
 */
export function createSqliteChangeWatch(db: SqliteConnection): SqliteChangeWatch {
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let seen = dataVersion.get();
  let generation = 0;
  const own = ownWrites.get(db) ?? { revocations: 0, clients: 0 };
  ownWrites.set(db, own);
  let readThisTurn = false;
  const endTurn = (): void => {
    readThisTurn = false;
  };
  function others(perRequest = false): number | null {
    if (!db.open) return null;
    if (readThisTurn && !perRequest) return generation;
    let current: number | undefined;
    try {
      current = dataVersion.get();
    } catch {
      return null;
    }
    if (current === undefined) return null;
    if (!readThisTurn) {
      readThisTurn = true;
      setImmediate(endTurn);
    }
    if (current !== seen) {
      seen = current;
      generation += 1;
    }
    return generation;
  }
  return {
    own,
    markOf(kind, perRequest = false) {
      let othersSeen = others();
      let ownSeen = own[kind];
      let mark = 0;
      return () => {
        const now = others(perRequest);
        if (now === null) return null;
        if (now !== othersSeen || own[kind] !== ownSeen) {
          othersSeen = now;
          ownSeen = own[kind];
          mark += 1;
        }
        return mark;
      };
    },
  };
}
