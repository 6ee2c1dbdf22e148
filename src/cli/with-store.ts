// Opens the store named by OAUTH_STORE for one command and always closes it afterwards.
import type { Store } from '../stores/contract.js';
import { createStoreFromUrl, DEFAULT_STORE_URL } from '../stores/from-url.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './cli-error.js';

/**
 * The store URL the admin command uses: `OAUTH_STORE` (e.g. `sqlite:./data/oauth.sqlite`, `postgres://…`),
 * or the embedded default. The example app reads the same variable, so both see the same integrations.
 */
export function storeUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const given = env['OAUTH_STORE'];
  if (given === undefined) return DEFAULT_STORE_URL;
  const url = given.trim();
  // Set but empty is most often a variable that expanded to nothing (OAUTH_STORE=$STORE_URL): the default store
  // would then be created or changed where nobody meant it.
  if (url === '') {
    throw new CliError(`OAUTH_STORE is set but empty; unset it for the default (${DEFAULT_STORE_URL}), or name the store your app uses`, EXIT_USAGE);
  }
  return url;
}

/** How a command opens the store. */
export interface WithStoreOptions {
  /**
   * Fail with `no_store` (exit 1) instead of creating a store that does not exist yet: every command but
   * `clients create` works on integrations that must already be there, and must not leave an empty
   * SQLite file (or a `data/` directory) behind in the wrong folder, the store's tables in a SQLite file that holds
   * none (0 bytes, another application's), nor PostgreSQL tables under a mistyped schema.
   */
  readonly mustExist?: boolean;
}

/** Whether opening failed because the SQLite file is not there (see `SqliteStoreOptions.fileMustExist`). */
function isMissingFile(error: unknown): error is Error & { path?: unknown } {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && (code === 'ENOENT' || code === 'SQLITE_CANTOPEN');
}

/** Whether opening refused a SQLite file that holds another application's data (`SqliteStoreOptions.refuseForeignFile`). */
function isForeignFile(error: unknown): error is Error & { path: string } {
  return error instanceof Error && (error as { code?: unknown }).code === 'EEXIST' && typeof (error as { path?: unknown }).path === 'string';
}

/**
 * Runs `work` against the configured store and closes it whatever happens: an open SQLite handle or
 * database connection would otherwise keep the process alive or leave the WAL unmerged.
 * @throws CliError `no_store` when `mustExist` and the store file is missing or holds no store; `usage_error`
 *   when a SQLite file holds another application's data and no store; otherwise whatever opening the store or
 *   `work` throws.
 */
export async function withStore<T>(work: (store: Store) => Promise<T>, options: WithStoreOptions = {}): Promise<T> {
  const url = storeUrlFromEnv();
  // A store in this process's memory ends with the command: a registration would print a secret for nothing.
  if (/^(?:memory:(?:\/\/)?|sqlite::memory:)$/i.test(url)) {
    throw new CliError(
      `OAUTH_STORE=${url} keeps nothing once the command ends; point it at the store your app uses (sqlite:PATH, postgres://…, redis://…, redis+cluster://…)`,
      EXIT_USAGE,
    );
  }
  let store: Store;
  try {
    // Never a new store inside another application's SQLite database: that is a mistyped path as much as a missing
    // file is, and the other application would find the store's tables among its own.
    store = await createStoreFromUrl(url, { mustExist: options.mustExist === true, refuseForeignFile: true });
  } catch (error) {
    const sqlite = /^sqlite:/i.test(url);
    if (sqlite && isForeignFile(error)) {
      throw new CliError(
        `${error.path} is a SQLite database with other data and no store (OAUTH_STORE=${url}); oauth-admin creates a store ` +
          'only in a new or empty file: set OAUTH_STORE to the store your app uses, or to a new file ' +
          '(an app that keeps the store in its own database creates it there when it starts)',
        EXIT_USAGE,
      );
    }
    // PostgreSQL's missing tables name their schema in `path`; an ENOENT without one (a missing socket) is no such thing.
    if (options.mustExist !== true || !isMissingFile(error) || (!sqlite && typeof error.path !== 'string')) throw error;
    const where = typeof error.path === 'string' ? error.path : url;
    // A sqlite: URL carries no password, so it can be shown; a PostgreSQL one may, so only its schema is.
    const chosen = !sqlite ? 'OAUTH_STORE' : process.env['OAUTH_STORE']?.trim() ? `OAUTH_STORE=${url}` : `OAUTH_STORE unset, default ${url}`;
    // `clients create` refuses another application's database, so it is no way out there.
    if ((error as { holds?: unknown }).holds === 'foreign') {
      throw new CliError(
        `no store at ${where}: it is a SQLite database with other data (${chosen}); set OAUTH_STORE to the store your app uses`,
        EXIT_FAILURE,
        'no_store',
      );
    }
    throw new CliError(
      `no store at ${where} (${chosen}); create an integration first (oauth-admin clients create), ` +
        `or set OAUTH_STORE to the store your app uses${sqlite ? '' : ' (its ?schema= and ?table_prefix=)'}`,
      EXIT_FAILURE,
      'no_store',
    );
  }
  try {
    return await work(store);
  } finally {
    await store.close?.();
  }
}
