// What may have changed on a SQLite file: other connections' commits (data_version, once a turn) and this connection's own writes.
import { executionAsyncResource } from 'node:async_hooks';
import type { SqliteConnection } from './driver.js';

/** Writes committed on one connection that its own data_version cannot see, by any store object using it. */
export interface OwnWrites {
  /** Revocations (token, grant, integration, user at an integration). */
  revocations: number;
  /** Integration writes (create, update, delete). */
  clients: number;
}

const ownWrites = new WeakMap<SqliteConnection, OwnWrites>();

/**
 * True while Node's HTTP server dispatches a request it has just parsed (the synchronous part of its 'request'
 * event, in the poll phase): the one context in which a data_version read may stand for the rest of the turn.
 * Anywhere else (a setImmediate or timer callback, a promise continuation, for which Node reports no resource)
 * it stands for its own call only. Should a Node version rename the resource, every read stands for its own call:
 * slower, never stale.
 */
function dispatchingRequest(): boolean {
  return executionAsyncResource()?.constructor?.name === 'HTTPServerAsyncResource';
}

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
 * event-loop turn (a read made while a request is dispatched stands for the rest of the turn; a setImmediate
 * forgets it when the turn ends), the per-turn check issue 10 allows: the requests a turn serves were read from
 * their sockets by that turn's poll, before the read, so none can have been sent after a commit the read
 * missed had been answered. A read made anywhere else stands for its own call only: made in the check phase (a
 * bearer check a host deferred with setImmediate), it would otherwise be reused by the requests of the next
 * poll phase, which may have been sent after such a commit. Calls with `perRequest` read for themselves and
 * never stand for the turn. Reading the pragma is
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
    if (!readThisTurn && !perRequest && dispatchingRequest()) {
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
