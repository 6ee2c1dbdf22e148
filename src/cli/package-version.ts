// The version of the installed package, for `oauth-admin --version`.
import { readFileSync } from 'node:fs';

/**
 * Reads `version` from the package's own package.json, found relative to this file (`dist/cli/` or
 * `src/cli/`, two levels below the package root), so it is right wherever the package is installed,
 * `node_modules/express-oauth-router/` included. Read at run time, not copied in at build time: the
 * number shown is the one npm installed.
 * @throws Error when package.json cannot be read or has no version (a broken install).
 */
export function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
  if (typeof parsed.version !== 'string') throw new Error('package.json has no version');
  return parsed.version;
}
