// The part of better-sqlite3 the SQLite store uses, typed here so the published types need no @types package.
import { requireDriver, type StoreDriver } from '../missing-driver.js';
import { runtimeRequire } from '../../runtime-require.js';

/** What a write statement reports. @see DESIGN §2 (the SQLite store). */
export interface SqliteRunResult {
  readonly changes: number;
  readonly lastInsertRowid: number | bigint;
}

/** Positional parameters as a tuple, or one object of named (`@name`) parameters. */
type BindParameters<P> = P extends unknown[] ? P : [P];

/** A prepared statement (better-sqlite3 `Statement`). @see DESIGN §3a (statements prepared once). */
export interface SqliteStatement<P extends unknown[] | object = unknown[], R = unknown> {
  run(...params: BindParameters<P>): SqliteRunResult;
  get(...params: BindParameters<P>): R | undefined;
  all(...params: BindParameters<P>): R[];
  /** Makes `get` and `all` return the first column's value instead of a row object. */
  pluck(toggleState?: boolean): this;
  /** Makes `get` and `all` return each row as an array of its values, in the statement's column order. */
  raw(toggleState?: boolean): this;
}

/** The parameters of F, written as better-sqlite3's typings write them so that its `Transaction` fits. */
type ArgumentsOf<F> = F extends (...args: infer A) => unknown ? A : never;

/** A function wrapped in a transaction (better-sqlite3 `Transaction`). @see RFC 7009 §2.1 (revocation is atomic). */
export interface SqliteTransaction<F extends (...args: never[]) => unknown> {
  (...args: ArgumentsOf<F>): ReturnType<F>;
  /** Runs it in `BEGIN IMMEDIATE`: the write lock is taken before the first read. */
  immediate(...args: ArgumentsOf<F>): ReturnType<F>;
}

/**
 * An open better-sqlite3 (v12) `Database`: what `createSqliteStore` accepts instead of a file name, so a
 * host can share its own connection. Only the members the store calls, untyped, so that better-sqlite3's
 * own typings (whose generic `prepare` no structural type can restate) fit without `@types/better-sqlite3`.
 * @see DESIGN §2 (the SQLite store).
 */
export interface SqliteDatabase {
  readonly open: boolean;
  prepare(source: string): unknown;
  // `any[]`, not `unknown[]`: the store's callbacks take typed parameters, which `unknown[]` would refuse.
  transaction(fn: (...args: any[]) => unknown): unknown;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
}

/** The same database as the store's code sees it: typed statements and transactions. @see DESIGN §3a. */
export interface SqliteConnection extends SqliteDatabase {
  /** Whether a transaction is open: false again after SQLite rolled one back by itself (a full disk, an I/O error). */
  readonly inTransaction: boolean;
  prepare<P extends unknown[] | object = unknown[], R = unknown>(source: string): SqliteStatement<P, R>;
  transaction<F extends (...args: any[]) => unknown>(fn: F): SqliteTransaction<F>;
}

/** The better-sqlite3 constructor. @see DESIGN §2 (the SQLite store). */
export type SqliteDatabaseConstructor = new (filename: string, options?: { fileMustExist?: boolean }) => SqliteConnection;

const BETTER_SQLITE3: StoreDriver = { store: 'SQLite', name: 'better-sqlite3', major: 12 };

/**
 * True for an open database handed over by the host (it has `prepare`), false for `{ filename }` options.
 * Structural, not `instanceof`: the host's copy of better-sqlite3 may not be the one this package resolves.
 */
export function isSqliteDatabase(value: object): value is SqliteDatabase {
  return typeof (value as { prepare?: unknown }).prepare === 'function';
}

/**
 * How the package manager that installed better-sqlite3 runs its install script (which builds the addon). Yarn 2+
 * builds a dependency only when package.json's `dependenciesMeta` allows it (Yarn 4.18.1 builds none by default), and
 * is told by Plug'n'Play's `process.versions.pnp` or the `npm_config_user_agent` it sets (`yarn/4.18.1 …`). pnpm 10
 * and 12 build none either ("Ignored build scripts: better-sqlite3", an install that fails on pnpm 12) until
 * `pnpm approve-builds` allows it (pnpm 10.34 asks which, pnpm 12 takes the name; both then build it, and pnpm 9's
 * `pnpm rebuild` after an `--ignore-scripts` install); pnpm is told by its user agent under `pnpm exec`, and by the
 * driver's path in its store (`node_modules/.pnpm/better-sqlite3@12…`) under plain `node` or `npx`, where npm's
 * advice would have npm rewrite pnpm's node_modules. npm 11 builds by `allowScripts`; Yarn 1 runs install scripts,
 * so npm's words stand for everything else.
 */
function buildAdvice(driverPath: string): string {
  const agent = process.env['npm_config_user_agent'] ?? '';
  const yarnBerry = process.versions['pnp'] !== undefined || /^yarn\/(?!1\.)/.test(agent);
  if (yarnBerry) return 'add "dependenciesMeta": { "better-sqlite3": { "built": true } } to your package.json, then yarn install';
  if (agent.startsWith('pnpm/') || /[\\/]node_modules[\\/]\.pnpm[\\/]/.test(driverPath)) {
    return 'pnpm approve-builds better-sqlite3 (pnpm 10 lists it for you to pick; on pnpm 9, pnpm rebuild better-sqlite3)';
  }
  return 'npm install-scripts approve better-sqlite3 && npm rebuild better-sqlite3';
}

/** Where better-sqlite3 resolved from, or '' where it cannot be told (a bundle that inlined it). */
function driverPath(): string {
  try {
    return runtimeRequire().resolve(BETTER_SQLITE3.name);
  } catch {
    return '';
  }
}

/** The constructor once it has opened a database: its native addon is there. */
let built: SqliteDatabaseConstructor | undefined;

/**
 * better-sqlite3's `Database` constructor, loaded only when a store opens a file: hosts of the other stores
 * need not install it (nor compile its native addon). Its first use opens an in-memory database, so a driver
 * whose addon was never built fails here, before the store makes a directory, and says how to build it.
 * @throws Error "The SQLite store needs better-sqlite3: npm install better-sqlite3@12" when it is missing, and
 *   "The SQLite store's better-sqlite3 is installed but not built…" when its install script did not run.
 * @see DESIGN §2 (SQLite is the embedded default store).
 */
export function loadBetterSqlite3(): SqliteDatabaseConstructor {
  if (built) return built;
  const Database = requireDriver<SqliteDatabaseConstructor>(BETTER_SQLITE3);
  try {
    new Database(':memory:').close();
  } catch (error) {
    // The `bindings` package's words for an addon that is not on disk, as after `npm install --ignore-scripts` or an
    // npm that skips install scripts missing from `allowScripts`; a build for another Node version says otherwise.
    if (error instanceof Error && error.message.startsWith('Could not locate the bindings file')) {
      throw new Error(
        `The SQLite store's better-sqlite3 is installed but not built (its install script did not run): ${buildAdvice(driverPath())}`,
        { cause: error },
      );
    }
    throw error;
  }
  built = Database;
  return Database;
}
