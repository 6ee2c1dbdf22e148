// Refuses, by reading only, a SQLite file that does not hold what the store was asked to open: the store, or nothing yet.
import type { SqliteConnection } from './driver.js';

/**
 * What a database file holds, as far as the store is concerned:
 * - `store`: the store's schema, at any version (`user_version` ≥ 1 and its `clients` table);
 * - `empty`: nothing (`user_version` 0, no table, index, view or trigger), as a 0-byte file does;
 * - `foreign`: anything else, such as another application's tables.
 */
type SqliteFileContents = 'store' | 'empty' | 'foreign';

/**
 * Reads the file's `user_version` and schema, and writes nothing: it runs before the store switches the file to WAL
 * or migrates it, both of which change it. `user_version` alone does not tell a store, since other applications
 * number their own schemas with it; every store version has had the `clients` table, from its first migration.
 * @see README "Administration: `oauth-admin`" (a command that needs a store fails on a file that holds none).
 */
function sqliteFileContents(db: SqliteConnection): SqliteFileContents {
  const version = db.pragma('user_version', { simple: true }) as number;
  const objects = db.prepare<[], string>("SELECT type || ' ' || name FROM sqlite_master").pluck().all();
  if (version === 0 && objects.length === 0) return 'empty';
  return version >= 1 && objects.includes('table clients') ? 'store' : 'foreign';
}

/** What a file opened by name may hold: `SqliteStoreOptions.fileMustExist` and `.refuseForeignFile`. */
export interface SqliteFileExpectations {
  /** The file's absolute path, for the error. */
  readonly path: string;
  readonly mustBeStore: boolean;
  readonly refuseForeign: boolean;
}

/**
 * Refuses, before anything is written, a file the store must not open: with `mustBeStore`, any file that holds no
 * store (an Error with `code: 'ENOENT'`, `path` and `holds`, `'empty'` or `'foreign'`, as for a missing file: there is no
 * store there either); with
 * `refuseForeign`, a file that holds something else (`code: 'EEXIST'` and `path`: a new store goes in a new or empty
 * file only). A tool that only reads must not turn a mistyped path into a store, and a tool that creates must not add
 * one to another application's database: the same typo.
 * @throws Error `ENOENT` or `EEXIST`, as above.
 * @see README "Administration: `oauth-admin`" (only `create` and `import` create a store, never in another database).
 */
export function checkSqliteFileContents(db: SqliteConnection, expected: SqliteFileExpectations): void {
  const { path } = expected;
  if (!expected.mustBeStore && !expected.refuseForeign) return;
  const contents = sqliteFileContents(db);
  if (contents === 'store') return;
  if (expected.mustBeStore) {
    // `holds` lets a tool say which: an empty file can become a store, another application's database must not.
    throw Object.assign(new Error(`createSqliteStore: no store in the database file at ${path}`), { code: 'ENOENT', path, holds: contents });
  }
  if (contents === 'foreign') {
    throw Object.assign(new Error(`createSqliteStore: the database file at ${path} holds no store but other data; a new store goes in a new or empty file`), { code: 'EEXIST', path });
  }
}
