// Loads a store's database driver (an optional peer dependency) on first use, naming the package when it is missing.
import { runtimeRequire } from '../runtime-require.js';

/** A store's driver: the npm package and the major version the store is written against. @see DESIGN §2 (built-in stores). */
export interface StoreDriver {
  /** The store as the message names it, e.g. `SQLite`. */
  readonly store: string;
  /** The npm package, e.g. `better-sqlite3`. */
  readonly name: string;
  /** The major version to install, e.g. `12`. */
  readonly major: number;
}

/**
 * True when `error` is Node (or Yarn Plug'n'Play) failing to find `name` itself (not a file or a dependency inside it).
 * @see DESIGN §2 (optional peer dependencies: drivers, prom-client).
 */
export function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  // Yarn Plug'n'Play words its own message ("tried to access pg (a peer dependency) but it isn't provided"), with no
  // quoted name, and says which package it is in `data.dependencyName` (`request` may be `pg/package.json`).
  const { pnpCode, data } = error as { pnpCode?: unknown; data?: { dependencyName?: unknown } };
  if (pnpCode === 'MISSING_PEER_DEPENDENCY' || pnpCode === 'UNDECLARED_DEPENDENCY') return data?.dependencyName === name;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && (message.includes(`'${name}'`) || message.includes(`"${name}"`));
}

function driverMissing(driver: StoreDriver, cause: unknown): Error {
  return new Error(
    `The ${driver.store} store needs ${driver.name}: npm install ${driver.name}@${driver.major}`,
    { cause },
  );
}

/**
 * `require()`s a CommonJS driver synchronously, for store factories that are synchronous. Drivers are
 * optional peer dependencies: a host installs only the one of the store it uses, so importing them at
 * module level would break every other host with a raw "Cannot find package".
 * @throws Error "The X store needs P: npm install P@N" when the package is not installed.
 * @see DESIGN §2 (built-in stores: SQLite embedded, PostgreSQL and Redis for many instances).
 */
export function requireDriver<T>(driver: StoreDriver): T {
  try {
    return runtimeRequire()(driver.name) as T;
  } catch (error) {
    throw isMissing(error, driver.name) ? driverMissing(driver, error) : error;
  }
}

/**
 * `import()`s a driver when the (asynchronous) store factory runs, for the same reason as `requireDriver`.
 * @throws Error "The X store needs P: npm install P@N" when the package is not installed.
 * @see DESIGN §2 (built-in stores: SQLite embedded, PostgreSQL and Redis for many instances).
 */
export async function importDriver<T>(driver: StoreDriver): Promise<T> {
  try {
    // Left to Node: webpack would make a computed import() an empty context that never finds the driver.
    return (await import(/* webpackIgnore: true */ driver.name)) as T;
  } catch (error) {
    throw isMissing(error, driver.name) ? driverMissing(driver, error) : error;
  }
}
