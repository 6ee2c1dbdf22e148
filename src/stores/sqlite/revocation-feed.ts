// The SQLite store's revocation feed: PRAGMA data_version for other connections, a counter for its own.
import type { RevocationFeed } from '../contract.js';
import type { SqliteConnection } from './driver.js';

/** Revocations committed on each connection, by any store object using it. */
const ownRevocations = new WeakMap<SqliteConnection, { count: number }>();

/** The feed, and the bump that the store's own revocations call once they have committed (or failed). */
export interface SqliteRevocationFeed {
  readonly feed: RevocationFeed;
  /** Called after each revocation on this connection: `data_version` does not see a connection's own commits. */
  bump(): void;
}

/**
 * `PRAGMA data_version` changes when any other connection (the CLI, another process, a second store on the
 * same file) commits, and only then; commits on this connection are counted by `bump()`. The mark is a
 * generation that moves when either does, so a token cached by `requireBearer` is refused after a
 * revocation from anywhere. Another connection's every commit (a token issued elsewhere, a sweep) also
 * moves it: a cache miss, never a stale answer.
 *
 * The pragma is read once per event-loop turn (the first mark() of a turn reads it; a setImmediate forgets
 * it when the turn ends), the per-turn check the issue allows: the requests a turn serves were read from
 * their sockets in that turn's poll phase, i.e. they were in flight while the check ran, so none of them can
 * have been sent after a revocation the check missed had been answered, up to the few hundred µs a turn lasts
 * under load. Reading the pragma is a read transaction (the WAL read lock taken and dropped, two fcntl
 * calls and a getpid): 1.4 µs of CPU alone, 5–8 % of a guarded request's busy samples under load when done per
 * request. This connection's own revocations are still seen at once: `bump()` is compared on every call.
 * A closed connection, or a read that fails (a locked or corrupted file), answers `null`: look it up.
 * @see RFC 7009 §2.1, https://sqlite.org/pragma.html#pragma_data_version
 */
export function createSqliteRevocationFeed(db: SqliteConnection): SqliteRevocationFeed {
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let seen = dataVersion.get();
  let generation = 0;
  // Commits on one connection are invisible to its data_version, whichever store object made them: two
  // stores on one host Database share this count, so each sees the other's revocations.
  let own = ownRevocations.get(db);
  if (!own) ownRevocations.set(db, (own = { count: 0 }));
  const shared = own;
  let ownSeen = shared.count;
  /** Whether the pragma was read in this turn of the event loop. */
  let readThisTurn = false;
  const endTurn = (): void => {
    readThisTurn = false;
  };
  return {
    feed: {
      mark() {
        if (!db.open) return null;
        if (!readThisTurn) {
          let current: number | undefined;
          try {
            current = dataVersion.get();
          } catch {
            return null;
          }
          if (current === undefined) return null;
          readThisTurn = true;
          setImmediate(endTurn);
          if (current !== seen) {
            seen = current;
            generation += 1;
          }
        }
        if (shared.count !== ownSeen) {
          ownSeen = shared.count;
          generation += 1;
        }
        return generation;
      },
    },
    bump() {
      shared.count += 1;
    },
  };
}
