// The SQLite store's revocation feed: other connections' commits and this connection's own revocations.
import type { RevocationFeed } from '../contract.js';
import type { SqliteChangeWatch } from './change-watch.js';

/** The feed, and the bump that the store's own revocations call once they have committed (or failed). */
export interface SqliteRevocationFeed {
  readonly feed: RevocationFeed;
  /** Called after each revocation on this connection: `data_version` does not see a connection's own commits. */
  bump(): void;
}

/**
 * The mark is a generation that moves when another connection has committed (read once per socket read, see
 * `createSqliteChangeWatch`) or this connection has revoked anything (seen at once), so a token cached by
 * `requireBearer` is refused after a revocation from anywhere. Another connection's every commit (a token
 * issued elsewhere, a sweep) also moves it: a cache miss, never a stale answer. An unreadable file answers
 * `null`: look it up.
 * @see RFC 7009 §2.1, contract `RevocationFeed`.
 */
export function createSqliteRevocationFeed(watch: SqliteChangeWatch): SqliteRevocationFeed {
  return {
    feed: { mark: watch.markOf('revocations') },
    bump() {
      watch.own.revocations += 1;
    },
  };
}
