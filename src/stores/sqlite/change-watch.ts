// What may have changed on a SQLite file: other connections' commits (data_version, once per socket read) and this connection's own writes.
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

/** Node's resource for a connection's HTTP parser: current while the server dispatches a request it has parsed. */
interface ConnectionResource {
  readonly socket: { readonly bytesRead: number };
}

/**
 * The connection whose request Node's HTTP server is dispatching (the synchronous part of its 'request' event, in
 * the poll phase): the one context in which a data_version read may stand for later calls. Anywhere else (a
 * setImmediate or timer callback, a promise continuation, for which Node reports no resource of a connection) a
 * read stands for its own call only. Should a Node version rename the resource, every read stands for its own call:
 * slower, never stale.
 */
function dispatchingConnection(resource: object | undefined): ConnectionResource | null {
  if (resource?.constructor?.name !== 'HTTPServerAsyncResource') return null;
  const socket = (resource as Partial<ConnectionResource>).socket;
  return typeof socket?.bytesRead === 'number' ? (resource as ConnectionResource) : null;
}

/** The watch of one store's connection. */
export interface SqliteChangeWatch {
  /** This connection's own writes, shared by every store object on it: bump after each commits (or fails). */
  readonly own: OwnWrites;
  /**
   * A mark (a generation) that moves when another connection (the CLI, another process, a second store on
   * the same file) has committed or this one's `own[kind]` count has; `null` while the file cannot be read
   * (closed, locked, corrupted), when nothing may be served from a cache. `perRequest` reads data_version
   * on every call instead of once per socket read.
   */
  markOf(kind: keyof OwnWrites, perRequest?: boolean): () => number | null;
}

/**
 * `PRAGMA data_version` changes when any other connection commits, and only then. A read made while a request is
 * dispatched stands for the requests of the same connection parsed from the same bytes (pipelined ones): it is
 * keyed by the connection's parser resource and the socket's `bytesRead`, so the next read of that socket, or a
 * request of any other connection, reads again. Those requests were received before the read, so none can have
 * been sent after a commit it missed had been answered. Not for the rest of the event-loop turn, as it first did:
 * libuv's poll phase takes at most 1,024 ready sockets from one `epoll_wait` and, when it gets that many, polls
 * again in the same phase (up to 48 times), so a turn can read sockets long after its first callback's read (an
 * outside audit: 6,000 connections, tokens revoked by another instance served for 4–5 s). Nor until the callback's
 * `process.nextTick`, as it then did: when a host's 'request' listener throws to an uncaughtException handler,
 * Node ends that callback without running its ticks until the next callback, another connection's, has ended. A
 * read made anywhere else stands for its own call only: made in the check phase (a bearer check a host deferred
 * with setImmediate), it would otherwise be reused by the requests of the next poll phase, which may have been
 * sent after such a commit. Calls with `perRequest` read for themselves and never stand for others. Reading the
 * pragma is a read transaction (the WAL read lock taken and dropped: two fcntl calls and a getpid), 1.4 µs of CPU
 * alone. Commits on this connection are invisible to its data_version, so its writers count them in `own`, which
 * callers compare on every call.
 *
 * When data_version has moved, the `change_counters` row (schema 9: triggers count every revocation and integration
 * write, whoever commits it) says what the commits were, and only a kind whose counter moved moves its marks: another
 * process issuing tokens no longer empties this one's caches. The row is read after the pragma, so it holds at least
 * every commit the pragma saw; one committed in between is counted now and read again, unchanged, at the next move.
 * @see RFC 7009 §2.1, https://sqlite.org/pragma.html#pragma_data_version, libuv src/unix/linux.c (uv__io_poll)
 */
export function createSqliteChangeWatch(db: SqliteConnection): SqliteChangeWatch {
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  const counters = db.prepare<[], [number, number]>('SELECT revocations, clients FROM change_counters WHERE id = 1').raw();
  let seen = dataVersion.get();
  let counted = counters.get();
  // Per kind: moves when another connection's commits moved that kind's counter.
  const generation: Record<keyof OwnWrites, number> = { revocations: 0, clients: 0 };
  const own = ownWrites.get(db) ?? { revocations: 0, clients: 0 };
  ownWrites.set(db, own);
  // The connection, and how many bytes it had read, that the last read stands for.
  let readFor: ConnectionResource | null = null;
  let readAt = -1;
  /** Reads the pragma (and, when it moved, the counters); false while the file cannot be read. */
  function read(perRequest: boolean): boolean {
    if (!db.open) return false;
    const resource = perRequest ? undefined : executionAsyncResource();
    if (resource === readFor && readFor !== null && readFor.socket.bytesRead === readAt) return true;
    let current: number | undefined;
    let now: [number, number] | undefined;
    try {
      current = dataVersion.get();
      // Only when something was committed elsewhere: the usual read is the pragma alone.
      now = current === seen ? counted : counters.get();
    } catch {
      return false;
    }
    if (current === undefined || now === undefined || counted === undefined) return false;
    if (!perRequest) {
      readFor = dispatchingConnection(resource);
      readAt = readFor === null ? -1 : readFor.socket.bytesRead;
    }
    if (current !== seen) {
      seen = current;
      if (now[0] !== counted[0]) generation.revocations += 1;
      if (now[1] !== counted[1]) generation.clients += 1;
      counted = now;
    }
    return true;
  }
  return {
    own,
    markOf(kind, perRequest = false) {
      let othersSeen = read(false) ? generation[kind] : -1;
      let ownSeen = own[kind];
      let mark = 0;
      return () => {
        if (!read(perRequest)) return null;
        const now = generation[kind];
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
