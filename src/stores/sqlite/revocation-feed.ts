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
 * generation that moves when either does, so a token cached by `requireBearer` is refused on the very next
 * request after a revocation from anywhere. Another connection's every commit (a token issued elsewhere,
 * a sweep) also moves it: a cache miss, never a stale answer. The pragma is one prepared statement read
 * synchronously: about 2.4 µs of CPU on the bench machine, most of it the system calls that take and drop
 * the WAL read lock; still less than half a token lookup, and no promise.
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
  return {
    feed: {
      mark() {
        if (!db.open) return null;
        let current: number | undefined;
        try {
          current = dataVersion.get();
        } catch {
          return null;
        }
        if (current === undefined) return null;
        if (current !== seen || shared.count !== ownSeen) {
          seen = current;
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
